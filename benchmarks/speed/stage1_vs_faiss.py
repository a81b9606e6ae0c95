"""Stage 1 alone, counterpoint's Index.search (scorer cosine: the K stage-1 candidates, top k kept)
against faiss's IndexFlatIP / IndexIVFFlat search of the same K (top k kept), same unit rows, same
query vectors, same nlist / nprobe (counterpoint's rule), each side in its own child process with
OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = --threads. Prints single-query p50 and batched queries/s
per side and the ratios (faiss time / counterpoint time: above 1 = counterpoint faster).

--scorer hoyer times the two-stage search instead: cos + alpha * Hoyer(Es(q) - Es(c)) over the K
candidates (Es rows and Es queries random unit rows, float32), against faiss's top-K plus the NumPy
float32 rerank of the gathered Es rows that peers/search_vs_faiss.py runs.

    .venv/bin/python benchmarks/speed/stage1_vs_faiss.py --faiss-python PY [--docs 8565] [--kinds flat,ivf]

PY is a Python that imports faiss, e.g. the peer venv's (`benchmarks/peers/venv.sh` prints it; the
faiss-cpu 1.8.0 wheel, an AVX2 build). Without --faiss-python only the library side runs.
COUNTERPOINT_PYTHON picks the counterpoint package (another build, for before/after figures).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
from bench import import_counterpoint, time_batched, time_single, unit_rows  # noqa: E402
from search_vs_faiss import PeerPipeline  # noqa: E402  (the peers run's faiss + NumPy pipeline)


def vectors(docs, queries, dim, seed):
    """Unit rows, and queries that are noisy copies of rows (so the top of each list is not a coin toss)."""
    rng = np.random.default_rng(seed)
    rows = unit_rows(rng, docs, dim)
    picks = rng.choice(docs, size=queries, replace=False)
    q = rows[picks] + 0.5 * unit_rows(rng, queries, dim)
    return rows, (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def ivf_parameters(n):
    """counterpoint's defaults (document_index.h): nlist = clamp(round(sqrt(n)), 1, n / 39), nprobe = ceil(nlist / 8)."""
    nlist = max(1, min(int(round(math.sqrt(n))), n // 39))
    return nlist, min(nlist, (nlist + 7) // 8)


def sparse_vectors(docs, queries, dim, seed):
    """Es rows and Es queries for --scorer hoyer: independent unit rows."""
    rng = np.random.default_rng(seed + 1)
    return unit_rows(rng, docs, dim), unit_rows(rng, queries, dim)


def side(args):
    rows, queries = vectors(args.docs, args.queries, args.dim, args.seed)
    sparse_rows, sparse_queries = sparse_vectors(args.docs, args.queries, args.dim, args.seed)
    hoyer = args.scorer == "hoyer"
    n = len(queries)
    out = {}
    for kind in args.kinds.split(","):
        nlist, nprobe = ivf_parameters(len(rows))
        start = time.process_time()
        if args.side == "library":
            cp = import_counterpoint()
            ids = [str(i) for i in range(len(rows))]
            if hoyer:
                index = cp.Index.build_from_embeddings(ids, rows, sparse_rows, encoder_id="external@synthetic",
                                                       sparse_encoder_id="external@synthetic-Es", kind=kind, bm25=False)
            else:
                index = cp.Index.build_from_embeddings(ids, rows, encoder_id="external@synthetic", kind=kind, bm25=False)
            extra = {"nprobe": nprobe} if kind == "ivf" else {}
            extra.update({"scorer": "hoyer", "alpha": args.alpha} if hoyer else {"scorer": "cosine"})

            def one(i, index=index, extra=extra):
                more = {"sparse_queries": sparse_queries[i:i + 1]} if hoyer else {}
                return index.search(queries[i:i + 1], k=args.k, candidates=args.candidates, **extra, **more)

            def batch(index=index, extra=extra):
                more = {"sparse_queries": sparse_queries} if hoyer else {}
                return index.search(queries, k=args.k, candidates=args.candidates, **extra, **more)

            def top_ids(index=index, extra=extra):
                return [[int(h.id) for h in hits] for hits in batch()]
        else:
            import faiss
            faiss.omp_set_num_threads(args.threads)
            if kind == "flat":
                index = faiss.IndexFlatIP(args.dim)
            else:
                index = faiss.IndexIVFFlat(faiss.IndexFlatIP(args.dim), args.dim, nlist, faiss.METRIC_INNER_PRODUCT)
                index.cp.max_points_per_centroid = 64
                index.train(rows)
                index.nprobe = nprobe
            index.add(rows)

            pipeline = PeerPipeline(faiss, index, sparse_rows, args.alpha, candidates=args.candidates)

            def one(i, index=index, pipeline=pipeline):
                if hoyer:
                    return pipeline.search(queries[i:i + 1], args.k, "hoyer", sparse_queries[i:i + 1])[0]
                return index.search(queries[i:i + 1], args.candidates)[1][:, :args.k]

            def batch(index=index, pipeline=pipeline):
                if hoyer:  # in chunks of 64 queries, as the peers run (K x d floats per query)
                    return pipeline.search(queries, args.k, "hoyer", sparse_queries)[0]
                return index.search(queries, args.candidates)[1][:, :args.k]

            def top_ids(index=index):
                return batch().tolist()
        out[kind] = {"single": time_single(one, n), "batched": time_batched(batch, n, args.repeats),
                     "top_ids": top_ids(), "cpu_s": time.process_time() - start}
        del index
    print(json.dumps(out))


def run_side(python, name, args):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    passed, skip = [], False
    for a in sys.argv[1:]:  # everything but --faiss-python PY / --faiss-python=PY
        if skip or a.startswith("--faiss-python"):
            skip = a == "--faiss-python" and not skip
            continue
        passed.append(a)
    command = [python, __file__, "--side", name] + passed
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faiss-python", help="a Python that imports faiss (the wheel); none = library side only")
    parser.add_argument("--docs", type=int, default=8565, help="rows (default: ArguAna's corpus size)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--candidates", type=int, default=100, help="stage-1 depth K")
    parser.add_argument("--kinds", default="flat,ivf")
    parser.add_argument("--scorer", choices=["cosine", "hoyer"], default="cosine",
                        help="hoyer: the two-stage search, cos + alpha * Hoyer over the K candidates")
    parser.add_argument("--alpha", type=float, default=3.5,
                        help="alpha of --scorer hoyer (a fixed weight over the synthetic rows)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--side", choices=["library", "faiss"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        side(args)
        return
    results = {"library": run_side(sys.executable, "library", args)}
    if args.faiss_python:
        results["faiss"] = run_side(args.faiss_python, "faiss", args)
    print(f"{args.docs:,} x {args.dim} rows, {args.queries} queries, K {args.candidates}, k {args.k}, "
          f"{args.threads} threads, scorer {args.scorer}" + (f" (alpha {args.alpha})" if args.scorer == "hoyer" else ""))
    for kind, lib in results["library"].items():
        line = (f"{kind}: counterpoint single p50 {lib['single']['p50_ms']:.3f} ms, batched "
                f"{lib['batched']['queries_per_s']:,.0f} q/s ({lib['cpu_s']:.1f} CPU-s)")
        if "faiss" in results:
            peer = results["faiss"][kind]
            same = np.mean([len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(lib["top_ids"], peer["top_ids"])])
            line += (f"; faiss single p50 {peer['single']['p50_ms']:.3f} ms, batched "
                     f"{peer['batched']['queries_per_s']:,.0f} q/s ({peer['cpu_s']:.1f} CPU-s); ratio single "
                     f"{peer['single']['p50_ms'] / lib['single']['p50_ms']:.2f}, batched "
                     f"{lib['batched']['queries_per_s'] / peer['batched']['queries_per_s']:.2f}; "
                     f"same top-{args.k} ids {same:.4f}")
        print(line)


if __name__ == "__main__":
    main()
