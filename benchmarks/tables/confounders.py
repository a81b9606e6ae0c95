#!/usr/bin/python3
"""Paper Table 6 analogue on SICK dev: contradiction retrieval with cosine alone and with
cos + alpha * Hoyer(Es) as the query's confounders (the corpus sentences the query entails, i.e. its
paraphrases and weakenings, labelled in the SICK pairs files) are removed from or kept in the corpus.

C_x: for every query at most x of its entailed sentences remain in the corpus (x = 0, 1, 2, all);
which ones stay is a seeded shuffle per query, nested (C_1 within C_2). Implemented with one index
built once over the whole corpus and per-query exclude lists, so a query's confounders are hidden
from that query only; the query's own id is always excluded.

    PYTHONPATH=python /usr/bin/python3 benchmarks/tables/confounders.py \
        [--data ../shared/data/sick] [--qrels ../shared/data/sick/qrels/dev.tsv] \
        [--sparse-model benchmarks/results/tmp/models/sick-sparsecl-hoyer] [--alpha A]

Writes benchmarks/results/confounders.{json,md} (or NAME.* with --results-name) and prints the table."""
import argparse
import collections
import sys
import time

import counterpoint as cp

import sick_support as ss

METRICS = ["ndcg@10", "recall@10", "acc@1"]
SCORERS = {"cos": "cosine", "hoyer": "hoyer"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ss.add_common_args(parser)
    parser.add_argument("--keep", default="0,1,2,all", help="the x of C_x: comma-separated counts or 'all'")
    parser.add_argument("--max-queries", type=int, default=0, help="only the first N queries (by id), for testing")
    parser.add_argument("--results-name", default="confounders", help="writes benchmarks/results/NAME.{json,md}")
    args = ss.resolve_args(parser.parse_args())
    try:
        keeps = [None if x == "all" else int(x) for x in args.keep.split(",")]
    except ValueError:
        raise SystemExit(f"--keep: {args.keep!r} is not a comma-separated list of counts or 'all'")

    started = time.time()
    sick = ss.Sick(args)
    queries = sick.query_ids[:args.max_queries] if args.max_queries > 0 else sick.query_ids
    qrels = {q: sick.qrels[q] for q in queries}
    # A contradiction that the query also entails would be a label error; such ids are never confounders.
    confounders = {q: ss.seeded_order(set(sick.entailed(q)) - set(qrels[q]) - {q}, args.seed, q) for q in queries}
    counts = collections.Counter(len(c) for c in confounders.values())
    index, _, _, encode_seconds = ss.load_index(args, sick)
    subsets = [("queries with >= 1 entailed sentence", [q for q in queries if confounders[q]]),
               ("queries with >= 2 entailed sentences", [q for q in queries if len(confounders[q]) >= 2]),
               ("all queries", queries)]

    command = ss.command_line(__file__)
    rows = []
    for keep in keeps:
        kept = {q: confounders[q][:keep] if keep is not None else confounders[q] for q in queries}
        excludes = [set(confounders[q]) - set(kept[q]) | {q} for q in queries]
        per_query, top1_entailed = {}, {}
        for short, scorer in SCORERS.items():
            hits = ss.search(index, [sick.query_text[q] for q in queries], excludes, scorer, args.alpha)
            per_query[short] = cp.evaluate(cp.hits_to_run(queries, hits), qrels, METRICS, per_query=True)
            top1_entailed[short] = {q: bool(h) and h[0].id in kept[q] for q, h in zip(queries, hits)}
        for subset, members in subsets:
            if not members:
                continue
            row = {"subset": subset, "corpus": f"C_{'all' if keep is None else keep}", "queries": len(members),
                   "kept_per_query": sum(len(kept[q]) for q in members) / len(members)}
            for short in SCORERS:
                for metric in METRICS:
                    row[f"{short}_{metric}"] = sum(per_query[short][q][metric] for q in members) / len(members)
                row[f"{short}_top1_entailed"] = sum(top1_entailed[short][q] for q in members) / len(members)
            row["command"] = command
            rows.append(row)
    rows.sort(key=lambda r: [s for s, _ in subsets].index(r["subset"]))
    seconds = round(time.time() - started, 1)

    distribution = ", ".join(f"{n}: {counts[n]}" for n in sorted(counts))
    notes = [
        f"Command (all rows, {seconds} s, of which {encode_seconds} s encoding the corpus; 0 = cached index): "
        f"`{command}`",
        f"E = `{ss.shorten(args.model)}` (cosine), Es = `{ss.shorten(args.sparse_model)}`, alpha = {args.alpha:g} "
        f"({args.alpha_source}); flat index, K = {ss.CANDIDATES} candidates, guard on, query's own id excluded. "
        f"{len(queries)} queries of `{ss.shorten(args.qrels)}`; relevant = the sentences that contradict the query.",
        f"Confounders = corpus sentences the query entails according to {', '.join(ss.shorten(p) for p in args.pairs)} "
        f"(per direction). Entailed sentences per query -> number of queries: {distribution}. Queries without "
        "any are identical in every C_x (they only enter the 'all queries' rows). Entailments from the held-back "
        "test pairs are unknown and stay in every C_x.",
        "C_x: at most x entailed sentences of the query remain (seeded shuffle per query, seed "
        f"{args.seed}); the others are excluded for that query only. 'kept' = mean number of entailed sentences "
        "left per query; 'top-1 entailed' = share of queries whose first hit is one of them.",
    ]
    columns = [("subset", "queries"), ("corpus", "corpus"), ("queries", "n"), ("kept_per_query", "kept")]
    for short, label in (("cos", "cos"), ("hoyer", "cos+Hoyer")):
        columns += [(f"{short}_ndcg@10", f"{label} nDCG@10"), (f"{short}_recall@10", f"{label} R@10"),
                    (f"{short}_acc@1", f"{label} Acc@1"), (f"{short}_top1_entailed", f"{label} top-1 entailed")]
    table = ss.write_results(args.results_name, "Contradiction retrieval with confounders kept or removed, SICK dev "
                             "(paper Table 6)", notes, columns, rows,
                             {**ss.settings(args), "keep": args.keep, "seconds": seconds,
                              "entailed_per_query": {str(n): counts[n] for n in sorted(counts)}})
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
