"""What the sparsity rerank adds to a query when Es is a head over E's network (sparse-default):
end-to-end single-query latency (query encoding included) of Index.search with scorer="cosine"
against scorer="hoyer" (K = 1000 candidates) on ArguAna, the two interleaved query by query so that
drift hits both alike. The goal is an overhead of at most 20%. Prints a table and writes
benchmarks/results/head_rerank_overhead.{json,md}.

The corpus rows are read from an embeddings cache (E and Es of the corpus, as benchmarks/peers/run.py
leaves them in its work directory) or, with --encode, computed here (one pass per batch for a head
Es) and written to that cache.

    .venv/bin/python benchmarks/speed/head_rerank_overhead.py --queries 200
"""
import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

import counterpoint as cp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
from bench import DATA, MODELS, RESULTS, command_line, this_python  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA / "arguana"))
    parser.add_argument("--qrels", default=None, help="queries to time: those of this qrels file (default dev)")
    parser.add_argument("--models", default=os.environ.get("COUNTERPOINT_MODELS", str(MODELS)))
    parser.add_argument("--cache", default=str(RESULTS / "tmp" / "peers" / "full"),
                        help="folder with arguana_docs.json, lib_arguana_docs_E.npy, lib_arguana_docs_Es.npy")
    parser.add_argument("--encode", action="store_true", help="encode the corpus into --cache when it is absent")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    E = cp.Encoder.load(os.path.join(args.models, "all-minilm-l6-v2"), threads=args.threads)
    Es = cp.Encoder.load(os.path.join(args.models, "sparse-default"), threads=args.threads)
    if not E.shares_network_with(Es):
        raise SystemExit("sparse-default is not a head over all-minilm-l6-v2's network: rebuild it (models/install.sh)")
    cache = pathlib.Path(args.cache)
    docs_file, e_file, es_file = (cache / "arguana_docs.json", cache / "lib_arguana_docs_E.npy",
                                  cache / "lib_arguana_docs_Es.npy")
    dataset = cp.load_beir(args.data)
    if all(p.exists() for p in (docs_file, e_file, es_file)):
        docs = json.loads(docs_file.read_text())
        rows, sparse_rows, source = np.load(e_file), np.load(es_file), f"cache {cache}"
    elif args.encode:
        docs = {"ids": [d.id for d in dataset.corpus], "texts": [d.encoding_text for d in dataset.corpus]}
        rows, sparse_rows = E.encode_both(Es, docs["texts"], batch_size=32, progress=True)
        cache.mkdir(parents=True, exist_ok=True)
        docs_file.write_text(json.dumps(docs))
        np.save(e_file, rows)
        np.save(es_file, sparse_rows)
        source = f"encoded here, written to {cache}"
    else:
        raise SystemExit(f"no corpus embeddings in {cache} (run benchmarks/peers/run.py, or pass --encode)")

    built = cp.Index.build_from_embeddings(docs["ids"], rows, sparse_rows, docs["texts"], encoder_id=E.identity,
                                           sparse_encoder_id=Es.identity)
    # An index of rows made elsewhere gets its encoders (for query texts) by a save / load round trip.
    with tempfile.TemporaryDirectory(prefix="head_rerank_") as folder:
        built.save(folder)
        index = cp.Index.load(folder, encoder=E, sparse_encoder=Es)

    qrels = cp.load_qrels(args.qrels or os.path.join(args.data, "qrels", "dev.tsv"))
    texts = {q.id: q.text for q in dataset.queries}
    query_ids = [q for q in qrels if q in texts][:args.queries]
    alpha = cp.choose_alpha(None, Es)[0]
    times = {"cosine": [], "hoyer": []}
    weights = {"cosine": {}, "hoyer": {"alpha": alpha}}  # cosine has no sparsity term to weigh
    for scorer in times:  # warm-up
        index.search([texts[query_ids[0]]], k=10, candidates=args.candidates, scorer=scorer, **weights[scorer])
    for i, qid in enumerate(query_ids):
        order = ("cosine", "hoyer") if i % 2 == 0 else ("hoyer", "cosine")
        for scorer in order:
            start = time.perf_counter()
            index.search([texts[qid]], k=10, candidates=args.candidates, scorer=scorer, **weights[scorer],
                         exclude=[[qid]])
            times[scorer].append(1000.0 * (time.perf_counter() - start))
    p50 = {s: statistics.median(t) for s, t in times.items()}
    mean = {s: statistics.fmean(t) for s, t in times.items()}
    result = {
        "command": command_line(this_python(), __file__, quote=False, short=False),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores", "load_average": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "corpus_rows": source, "docs": len(docs["ids"]),
        "queries": len(query_ids), "candidates": args.candidates, "alpha": alpha, "threads": args.threads,
        "p50_ms": p50, "mean_ms": mean,
        "overhead_p50": p50["hoyer"] / p50["cosine"] - 1.0, "overhead_mean": mean["hoyer"] / mean["cosine"] - 1.0,
    }
    lines = ["# Sparsity rerank overhead with a head Es (end to end, query encoding included)", "",
             f"Command: `{result['command']}`  ",
             f"{result['machine']}, load average {tuple(round(x, 2) for x in result['load_average'])}, {result['date']}; "
             f"ArguAna {result['docs']} docs, {result['queries']} queries (interleaved), K = {args.candidates}, "
             f"alpha {alpha:g}, {args.threads} threads; corpus rows: {source}", "",
             "| scorer | p50 ms | mean ms |", "|---|---|---|",
             f"| cosine | {p50['cosine']:.1f} | {mean['cosine']:.1f} |",
             f"| cos + alpha * Hoyer | {p50['hoyer']:.1f} | {mean['hoyer']:.1f} |", "",
             f"Overhead of the rerank: {100 * result['overhead_p50']:+.1f}% at p50, "
             f"{100 * result['overhead_mean']:+.1f}% on the mean (goal: at most +20%)."]
    print("\n".join(lines))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "head_rerank_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "head_rerank_overhead.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
