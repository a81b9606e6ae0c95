#!/usr/bin/python3
"""Per-query latency on the dev queries of a BEIR set (ArguAna by default), one query per call, K = 1000 stage-1 candidates: cosine
only and cosine + alpha * Hoyer(Es), each with query encoding (the whole Index.search call) and
without it (the same call minus the time Encoder.encode takes for that query's E and Es embeddings,
measured right before). Prints one JSON object; rerank_and_latency.sh turns it into the table."""
import argparse
import json
import sys
import time
from pathlib import Path

import counterpoint as cp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import DATA, MODELS, percentiles  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default=str(DATA / "arguana"))
    parser.add_argument("--qrels", default=str(DATA / "arguana/qrels/dev.tsv"))
    parser.add_argument("--index", required=True, help="index directory holding E and Es embeddings")
    parser.add_argument("--model", default=str(MODELS / "use-lite-en"))
    parser.add_argument("--sparse-model", required=True)
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--max-queries", type=int, default=500)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    for flag in ("dataset", "qrels", "index", "model", "sparse_model"):
        if not Path(getattr(args, flag)).exists():
            raise SystemExit(f"--{flag.replace('_', '-')}: {getattr(args, flag)} does not exist")

    qrels = cp.load_qrels(args.qrels)
    queries = [q for q in cp.load_beir(args.dataset).queries if q.id in qrels][:args.max_queries]
    dense = cp.Encoder.load(args.model, threads=args.threads)
    sparse = cp.Encoder.load(args.sparse_model, threads=args.threads)
    index = cp.Index.load(args.index, encoder=dense, sparse_encoder=sparse)
    configs = {"cosine": dict(scorer="cosine"), "cosine + Hoyer": dict(scorer="hoyer", alpha=args.alpha)}
    for cfg in configs.values():  # warm-up
        index.search([queries[0].text], k=10, candidates=args.candidates, **cfg)

    result = {"dataset": Path(args.dataset).name, "alpha": args.alpha, "queries": len(queries), "candidates": args.candidates, "index_size": len(index),
              "index_kind": index.kind, "threads": args.threads, "rows": []}
    for name, cfg in configs.items():
        with_encoding, without = [], []
        for q in queries:
            t0 = time.perf_counter()
            dense.encode([q.text], query=True)
            if cfg["scorer"] != "cosine":
                sparse.encode([q.text], query=True)
            t1 = time.perf_counter()
            index.search([q.text], k=10, candidates=args.candidates, exclude=[[q.id]], **cfg)
            t2 = time.perf_counter()
            with_encoding.append((t2 - t1) * 1e3)
            without.append(max(0.0, (t2 - t1) - (t1 - t0)) * 1e3)
        result["rows"].append({"scorer": name, "query_encoding": "included", **percentiles(with_encoding, 3)})
        result["rows"].append({"scorer": name, "query_encoding": "excluded (search minus encode)",
                               **percentiles(without, 3)})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
