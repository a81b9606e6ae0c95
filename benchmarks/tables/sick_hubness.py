#!/usr/bin/python3
"""Hubness reduction over a SICK run: does a passage that out-scores its neighbours for many
queries (a hub) take first hits from the labelled contradictions? The score of cos + alpha *
sparsity is symmetric (Hoyer of -d is Hoyer of d; no query prefix), so each passage's hubness r(p)
is the mean of its own top-K scores, p searched as a query against the corpus (CSLS, Conneau et al.
2018); the run is re-ranked by s(q, p) - beta * r(p). beta would be chosen on train; both splits are
printed for every beta.

    PYTHONPATH=python /usr/bin/python3 benchmarks/tables/sick_hubness.py [--model E --sparse-model ES \\
        --index-cache DIR --alpha A --stage1 hybrid --fusion-lambda L --sparsity-scale TAU] [--hub-k 1 3 10]

The defaults are the best SICK row of results/contradiction_table_all-minilm-l6-v2.md (CL E, three
epochs, + the MLP head over the zero-shot network, hybrid stage 1, gate; models re-trained by
`rerun_row.sh`). Prints nDCG@10 per split, K and beta, and the CPU seconds taken."""
import argparse
import json
import sys
import time
from pathlib import Path

import counterpoint as cp

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "benchmarks/results/tmp/models"


def hubness(own_runs: dict, k: int) -> dict:
    """Each passage's hubness: the mean of its K best scores as a query ({id: [(id, score), ...]},
    best first)."""
    return {p: sum(s for _, s in row[:k]) / len(row[:k]) if row else 0.0 for p, row in own_runs.items()}


def rerank(run: dict, hubs: dict, beta: float) -> dict:
    """s(q, p) - beta * r(p), best first."""
    return {q: sorted(((p, s - beta * hubs[p]) for p, s in row), key=lambda hit: -hit[1]) for q, row in run.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/sick"))
    parser.add_argument("--splits", nargs="+", default=["train", "dev"], help="qrels/<split>.tsv of --data")
    parser.add_argument("--model", default=str(MODELS / "all-minilm-l6-v2-sick-cl-3ep"))
    parser.add_argument("--sparse-model", default=str(MODELS / "all-minilm-l6-v2-sick-sparsecl-hoyer-mlp-head"))
    parser.add_argument("--index-cache", default=str(ROOT / "benchmarks/results/tmp/indexes/"
                                                     "all-minilm-l6-v2-sick-cl-3ep+sparsecl-hoyer-mlp-head"),
                        help="the corpus's index with these models: read when present, else built and written")
    parser.add_argument("--alpha", type=float, default=1.55)
    parser.add_argument("--stage1", default="hybrid")
    parser.add_argument("--fusion-lambda", type=float, default=0.1)
    parser.add_argument("--sparsity-scale", type=float, default=0.4)
    parser.add_argument("--candidates", type=int, default=1000, help="stage-1 candidates (run's default)")
    parser.add_argument("--hub-k", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--betas", type=float, nargs="+", default=[0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0])
    args = parser.parse_args()
    start = time.process_time()
    data = Path(args.data)
    qrels = {split: cp.load_qrels(data / "qrels" / f"{split}.tsv") for split in args.splits}
    encoder = cp.Encoder.load(args.model, threads=2)
    sparse = cp.Encoder.load(args.sparse_model, threads=2)
    corpus = [json.loads(line) for line in open(data / "corpus.jsonl", encoding="utf-8")]
    if args.index_cache and Path(args.index_cache).exists():
        index = cp.Index.load(args.index_cache, encoder=encoder, sparse_encoder=sparse)
    else:
        index = cp.Index.build([d["text"] for d in corpus], [d["_id"] for d in corpus], encoder=encoder,
                               sparse_encoder=sparse, bm25=args.stage1 != "dense")
        if args.index_cache:
            index.save(args.index_cache)
    options = dict(scorer="hoyer", alpha=args.alpha, stage1=args.stage1, sparsity_scale=args.sparsity_scale,
                   **({"fusion_lambda": args.fusion_lambda} if args.stage1 == "hybrid" else {}))

    def search(ids, texts, k):
        hits = index.search(texts, k, candidates=args.candidates, exclude=[[i] for i in ids], **options)
        return {i: [(h.id, h.score) for h in row] for i, row in zip(ids, hits)}

    deepest = max(args.hub_k)
    own = search([d["_id"] for d in corpus], [d["text"] for d in corpus], deepest)
    queries = {q["_id"]: q["text"] for q in map(json.loads, open(data / "queries.jsonl", encoding="utf-8"))}
    runs = {split: search(sorted(judged), [queries[q] for q in sorted(judged)], 100) for split, judged in qrels.items()}
    print("| split | hub K | " + " | ".join(f"beta {b:g}" for b in args.betas) + " |")
    print("|---|---|" + "---|" * len(args.betas))
    for split, run in runs.items():
        for k in args.hub_k:
            hubs = hubness(own, k)
            cells = [f"{cp.evaluate(rerank(run, hubs, beta), qrels[split], ['ndcg@10'])['ndcg@10']:.4f}"
                     for beta in args.betas]
            print(f"| {split} | {k} | " + " | ".join(cells) + " |")
    print(f"CPU-s {time.process_time() - start:.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
