"""Do nlist and nprobe reach Milvus Lite's IVF_FLAT? Writes N clustered unit rows (milvus_scale.py's
corpus shape) into a Milvus Lite collection with an IVF_FLAT index on E as counterpoint.milvus
declares it (COSINE, params={"nlist": nlist}), then searches it with nprobe 1, nlist / 8 (counterpoint's
rule), no nprobe and nprobe = nlist (every list: exact on a real IVF_FLAT) and prints recall@10 and
recall@100 of the top 100 against exact search, with what describe_index reports.

    .venv/bin/python benchmarks/speed/milvus_ivf_params.py --docs 50000 300000 [--index-after-insert]
"""
import argparse
import math
import pathlib
import shutil
import tempfile
import time

import numpy as np
from pymilvus import DataType, MilvusClient


def unit(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def corpus(n, dim, queries, seed):
    rng = np.random.default_rng(seed)
    topics = unit(rng.standard_normal((max(1, n // 100), dim), dtype=np.float32))
    rows = unit(topics[rng.integers(0, len(topics), n)] + 0.6 * unit(rng.standard_normal((n, dim), dtype=np.float32)))
    q = unit(rows[rng.choice(n, queries, replace=False)] + 0.3 * unit(rng.standard_normal((queries, dim), dtype=np.float32)))
    return rows, q


def run(n, args, folder):
    dim, depth = 384, 100
    rows, queries = corpus(n, dim, args.queries, seed=n)
    exact = np.argsort(-(queries @ rows.T), axis=1, kind="stable")[:, :depth]
    nlist = max(1, int(round(math.sqrt(n))))
    client = MilvusClient(str(folder / f"ivf_{n}.db"))
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("e", DataType.FLOAT_VECTOR, dim=dim)
    index = client.prepare_index_params()
    index.add_index("e", index_type="IVF_FLAT", metric_type="COSINE", params={"nlist": nlist})
    if args.index_after_insert:
        client.create_collection("t", schema=schema, consistency_level="Strong")
    else:
        client.create_collection("t", schema=schema, index_params=index, consistency_level="Strong")
    for start in range(0, n, 1000):
        client.insert("t", [{"id": i, "e": rows[i].tolist()} for i in range(start, min(n, start + 1000))])
    client.flush("t")
    if args.index_after_insert:
        client.create_index("t", index)
    client.load_collection("t")
    print(f"N {n:,}: describe_index {client.describe_index('t', 'e')}")
    for label, params in (("nprobe 1", {"nprobe": 1}), (f"nprobe {math.ceil(nlist / 8)}", {"nprobe": math.ceil(nlist / 8)}),
                          ("no nprobe", {}), (f"nprobe {nlist} (all lists)", {"nprobe": nlist})):
        found, start = [], time.perf_counter()
        for q in queries:
            hits = client.search("t", data=[q.tolist()], anns_field="e", limit=depth,
                                 search_params={"metric_type": "COSINE", "params": params})[0]
            found.append([h["id"] for h in hits])
        ms = 1000 * (time.perf_counter() - start) / len(queries)
        recall = {k: np.mean([len(set(f[:k]) & set(e[:k])) / k for f, e in zip(found, exact)]) for k in (10, 100)}
        print(f"N {n:,}, nlist {nlist}, {label}: recall@10 {recall[10]:.4f}, recall@100 {recall[100]:.4f}, {ms:.2f} ms/query")
    client.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[50_000, 300_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--index-after-insert", action="store_true",
                        help="create the index after the rows are flushed instead of with the collection")
    args = parser.parse_args()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="milvus_ivf_"))
    try:
        for n in args.docs:
            run(n, args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
