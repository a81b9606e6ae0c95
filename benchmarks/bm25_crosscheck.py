#!/usr/bin/python3
"""Independent check of counterpoint's BM25 figure on ArguAna dev: a SciPy implementation of Okapi
BM25 over the same tokens (lower-cased alphanumeric runs, k1 0.9, b 0.4), with the idf of
Lucene/Anserini (what counterpoint uses) and with the idf of the rank_bm25 package (negative idf
floored at 0.25 * mean idf), each with the query's own id excluded from its results (as BEIR and
counterpoint do) and kept. It explains which BM25 variant a reference figure came from.

    /usr/bin/python3 benchmarks/bm25_crosscheck.py [--dataset ../shared/data/arguana] [--qrels FILE]

Writes benchmarks/results/bm25_crosscheck.md and prints it."""
import argparse
import json
import math
import os
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str):
    return TOKEN.findall(text.lower())


def load_jsonl(path: Path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_qrels(path: Path):
    qrels = {}
    with open(path) as f:
        for i, line in enumerate(f):
            q, d, grade = line.rstrip("\n").split("\t")
            if i == 0 and not grade.strip().lstrip("-").isdigit():
                continue
            qrels.setdefault(q, {})[d] = int(grade)
    return qrels


def ndcg_at_10(ranked, relevant):
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(r + 2) for r, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2 ** g - 1) / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default=str(ROOT.parent / "shared/data/arguana"))
    parser.add_argument("--qrels", default=None, help="default: DATASET/qrels/dev.tsv")
    parser.add_argument("--k1", type=float, default=0.9)
    parser.add_argument("--b", type=float, default=0.4)
    args = parser.parse_args()
    dataset = Path(args.dataset)
    qrels_path = Path(args.qrels) if args.qrels else dataset / "qrels" / "dev.tsv"
    for path in (dataset / "corpus.jsonl", dataset / "queries.jsonl", qrels_path):
        if not path.exists():
            sys.exit(f"missing {path}")
    docs = load_jsonl(dataset / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in load_jsonl(dataset / "queries.jsonl")}
    qrels = {q: r for q, r in load_qrels(qrels_path).items() if q in queries}

    vocab, rows, cols, counts, lengths = {}, [], [], [], []
    for i, d in enumerate(docs):
        toks = tokens((d.get("title") or "") + " " + d["text"])
        lengths.append(len(toks))
        tf = {}
        for t in toks:
            k = vocab.setdefault(t, len(vocab))
            tf[k] = tf.get(k, 0) + 1
        rows += [i] * len(tf)
        cols += list(tf)
        counts += list(tf.values())
    n_docs = len(docs)
    tf = sp.coo_matrix((counts, (rows, cols)), shape=(n_docs, len(vocab)))
    df = np.bincount(tf.col, minlength=len(vocab))
    lengths = np.array(lengths, dtype=float)
    ids = [d["_id"] for d in docs]
    idfs = {"lucene": np.log(1 + (n_docs - df + 0.5) / (df + 0.5))}
    okapi = np.log((n_docs - df + 0.5) / (df + 0.5))
    idfs["rank_bm25"] = np.where(okapi < 0, 0.25 * okapi.mean(), okapi)

    lines = ["# BM25 cross-check on " + dataset.name, "",
             f"{len(qrels)} queries of `{os.path.relpath(qrels_path, ROOT)}`, {n_docs} documents, k1 {args.k1}, b {args.b}, "
             "lower-cased alphanumeric tokens. Command: `" +
             " ".join(shlex.quote(a) for a in ["/usr/bin/python3", "benchmarks/bm25_crosscheck.py"] + sys.argv[1:]) + "`",
             "", "| idf | query's own id | nDCG@10 |", "|---|---|---|"]
    for name, idf in idfs.items():
        weight = idf[tf.col] * tf.data * (args.k1 + 1) / (
            tf.data + args.k1 * (1 - args.b + args.b * lengths[tf.row] / lengths.mean()))
        w = sp.csr_matrix((weight, (tf.row, tf.col)), shape=tf.shape)
        for keep_self in (False, True):
            total = 0.0
            for q, relevant in qrels.items():
                qv = np.zeros(len(vocab))
                for t in tokens(queries[q]):
                    if t in vocab:
                        qv[vocab[t]] += 1
                order = np.argsort(-(w @ qv), kind="stable")[:11]
                ranked = [ids[i] for i in order if keep_self or ids[i] != q]
                total += ndcg_at_10(ranked, relevant)
            lines.append(f"| {name} | {'kept' if keep_self else 'excluded'} | {total / len(qrels):.4f} |")
    table = "\n".join(lines) + "\n"
    (ROOT / "benchmarks" / "results" / "bm25_crosscheck.md").write_text(table)
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
