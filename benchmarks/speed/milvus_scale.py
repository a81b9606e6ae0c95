"""Two-stage contradiction search at scale: Milvus Lite against the in-process index.

For each corpus size N (synthetic E and Es rows, 384 wide like the default models): export rate
into Milvus Lite, per-query latency of the two-stage search (cos + alpha * Hoyer over K
candidates), its recall@10 against the exact two-stage result (the in-process flat index), and the
bytes each side holds per document, for a FLAT and an IVF_FLAT index on E in both. Prints a table
and writes benchmarks/results/milvus_scale.{json,md}.

    .venv/bin/python benchmarks/speed/milvus_scale.py --sizes 100000 1000000
"""
import argparse
import json
import math
import os
import pathlib
import platform
import shutil
import sys
import tempfile
import time

import numpy as np
import psutil

import counterpoint as cp
import counterpoint.milvus as cpm
from pymilvus import MilvusClient

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
from bench import RESULTS, command_line, this_python, unit  # noqa: E402


def synthetic(n, dim, sparse_dim, queries, seed):
    """Clustered corpus rows (n / 100 topics; a row's cosine to its topic is about 0.86, as passages
    of one topic are close and topics far apart) and queries that are noisy copies of corpus rows.
    Uniformly random rows would have no neighbourhoods for an approximate index to find."""
    rng = np.random.default_rng(seed)
    topics = unit(rng.standard_normal((max(1, n // 100), dim), dtype=np.float32))
    noise = unit(rng.standard_normal((n, dim), dtype=np.float32))
    dense = unit(topics[rng.integers(0, len(topics), n)] + 0.6 * noise)
    del noise
    sparse = rng.standard_normal((n, sparse_dim), dtype=np.float32)
    picks = rng.choice(n, size=queries, replace=False)
    query_dense = unit(dense[picks] + 0.3 * unit(rng.standard_normal((queries, dim), dtype=np.float32)))
    query_sparse = (sparse[picks] + 0.05 * rng.standard_normal((queries, sparse_dim), dtype=np.float32)).astype(np.float32)
    return dense, sparse, query_dense, query_sparse


def milvus_server_rss():
    """Resident bytes of the Milvus Lite server processes this process started."""
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total


def path_bytes(path):
    path = pathlib.Path(path)
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def recall_at(expected, got, k):
    hits = [len({h.id for h in e[:k]} & {h.id for h in g[:k]}) / max(1, min(k, len(e))) for e, g in zip(expected, got)]
    return float(np.mean(hits))


def timed_queries(search, dense, sparse):
    """Per-query latencies (ms) of single-query calls, and their results."""
    latencies, results = [], []
    for i in range(len(dense)):
        start = time.perf_counter()
        results.append(search(dense[i:i + 1], sparse[i:i + 1])[0])
        latencies.append(1000.0 * (time.perf_counter() - start))
    return np.array(latencies), results


def run_size(n, args, workdir):
    dim = sparse_dim = 384
    dense, sparse, query_dense, query_sparse = synthetic(n, dim, sparse_dim, args.queries, seed=n)
    ids = [f"d{i}" for i in range(n)]
    nlist = max(1, int(round(math.sqrt(n))))
    nprobe = math.ceil(nlist / 8)
    rows = []
    search_kwargs = dict(k=10, candidates=args.candidates, scorer="hoyer", alpha=args.alpha)

    in_process = {}
    for kind in ("flat", "ivf"):
        rss_before = psutil.Process().memory_info().rss
        start = time.perf_counter()
        index = cp.Index.build_from_embeddings(ids, dense, sparse, encoder_id="external@synthetic-e",
                                               sparse_encoder_id="external@synthetic-es", kind=kind)
        build_s = time.perf_counter() - start
        latencies, results = timed_queries(
            lambda q, s: index.search(q, sparse_queries=s, nprobe=nprobe if kind == "ivf" else 0, **search_kwargs),
            query_dense, query_sparse)
        in_process[kind] = (index, results)
        rows.append({"n": n, "system": "counterpoint Index", "index": kind.upper() if kind == "flat" else "IVF-Flat",
                     "nlist": nlist if kind == "ivf" else None, "nprobe": nprobe if kind == "ivf" else None,
                     "load_s": round(build_s, 2), "load_docs_per_s": round(n / build_s),
                     "p50_ms": round(float(np.median(latencies)), 2), "p99_ms": round(float(np.percentile(latencies, 99)), 2),
                     "memory_bytes_per_doc": round(index.memory_bytes / n),
                     "rss_increase_bytes_per_doc": round((psutil.Process().memory_info().rss - rss_before) / n)})
    del dense, sparse  # the indexes hold the rows now
    exact = in_process["flat"][1]
    for row, kind in zip(rows, ("flat", "ivf")):
        row["recall@10"] = round(recall_at(exact, in_process[kind][1], 10), 4)
    source = in_process["flat"][0]
    del in_process

    for index_type, params, search_params in (("FLAT", {}, {}), ("IVF_FLAT", {"nlist": nlist}, {"nprobe": nprobe})):
        database = workdir / f"milvus_{n}_{index_type}.db"
        client = MilvusClient(str(database))
        rss_before = milvus_server_rss()
        start = time.perf_counter()
        cpm.export(source, client, "bench", batch_size=args.batch_size, index_type=index_type, index_params=params,
                   progress=False)
        export_s = time.perf_counter() - start
        retriever = cpm.MilvusRetriever(client, "bench")
        retriever.search(query_dense[:1], sparse_queries=query_sparse[:1], **search_kwargs)  # warm the loaded segments
        latencies, results = timed_queries(
            lambda q, s: retriever.search(q, sparse_queries=s, search_params=search_params, **search_kwargs),
            query_dense, query_sparse)
        rows.append({"n": n, "system": "Milvus Lite", "index": index_type, "nlist": params.get("nlist"),
                     "nprobe": search_params.get("nprobe"), "load_s": round(export_s, 2),
                     "load_docs_per_s": round(n / export_s),
                     "p50_ms": round(float(np.median(latencies)), 2), "p99_ms": round(float(np.percentile(latencies, 99)), 2),
                     "disk_bytes_per_doc": round(path_bytes(database) / n),
                     "rss_increase_bytes_per_doc": round((milvus_server_rss() - rss_before) / n),
                     "recall@10": round(recall_at(exact, results, 10), 4)})
        client.close()
        from milvus_lite.server_manager import server_manager_instance
        server_manager_instance.release_server(str(database))
        database.unlink(missing_ok=True)
    return rows


def markdown(rows, meta):
    lines = [f"# Two-stage search at scale: Milvus Lite vs the in-process index", "",
             f"Command: `{meta['command']}`  ",
             f"Machine: {meta['machine']}; load average before: {meta['load_average']}; {meta['date']}", "",
             f"Synthetic clustered rows (n / 100 topics), E and Es 384 wide, export batches of {meta['batch_size']}, {meta['queries']} single-query calls per row, "
             f"cos + {meta['alpha']} * Hoyer over K = {meta['candidates']}; recall@10 against the exact two-stage "
             "result (in-process flat).", "",
             "| N | system | index | nlist / nprobe | load (docs/s) | p50 ms | p99 ms | recall@10 | bytes/doc in memory | bytes/doc on disk |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        probe = f"{r['nlist']} / {r['nprobe']}" if r.get("nlist") else "-"
        memory = r.get("memory_bytes_per_doc", r.get("rss_increase_bytes_per_doc"))
        memory_note = "" if "memory_bytes_per_doc" in r else " (server RSS increase)"
        lines.append(f"| {r['n']:,} | {r['system']} | {r['index']} | {probe} | {r['load_docs_per_s']:,} | "
                     f"{r['p50_ms']} | {r['p99_ms']} | {r['recall@10']} | {memory:,}{memory_note} | "
                     f"{r.get('disk_bytes_per_doc', '-')} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--alpha", type=float, default=1.0)
    # Milvus Lite 2.5.1 inserts 1,000-row batches at ~3,000 docs/s here but 5,000-row batches at ~160.
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--results-name", default="milvus_scale")
    args = parser.parse_args()
    meta = {"command": command_line(this_python(), __file__, quote=False, short=False),
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                       f"{round(psutil.virtual_memory().total / 2**30)} GiB",
            "load_average": [round(x, 2) for x in os.getloadavg()], "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "queries": args.queries, "batch_size": args.batch_size, "candidates": args.candidates, "alpha": args.alpha}
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="milvus_scale_"))
    rows = []
    try:
        for n in args.sizes:
            rows += run_size(n, args, workdir)
            print(markdown(rows, meta), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.results_name}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    (RESULTS / f"{args.results_name}.md").write_text(markdown(rows, meta))


if __name__ == "__main__":
    main()
