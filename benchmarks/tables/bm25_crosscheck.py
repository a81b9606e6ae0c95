#!/usr/bin/python3
"""Independent check of counterpoint's BM25 figure on ArguAna dev: a SciPy implementation of Okapi
BM25 over the same tokens (lower-cased alphanumeric runs, k1 0.9, b 0.4), with the idf of
Lucene/Anserini (what counterpoint uses) and with the idf of the rank_bm25 package (negative idf
floored at 0.25 * mean idf), each with the query's own id excluded from its results (as BEIR and
counterpoint do) and kept. It explains which BM25 variant a reference figure came from.

    /usr/bin/python3 benchmarks/tables/bm25_crosscheck.py [--dataset ../shared/data/arguana] [--qrels FILE]

Writes benchmarks/results/bm25_crosscheck.md and prints it."""
import argparse
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import DATA, RESULTS, ROOT, command_line, read_jsonl, read_qrels  # noqa: E402

TOKEN = re.compile(r"[a-z0-9]+")


# Read without counterpoint: this check runs under /usr/bin/python3, apart from the library it checks.
def read_corpus(data_dir: Path) -> dict:
    """A BEIR corpus, {id: text} in corpus order; the text is the title, a space and the text when
    there is a title (as data::encoding_text)."""
    return {d["_id"]: (d.get("title") + " " + d["text"]) if d.get("title") else d["text"]
            for d in read_jsonl(Path(data_dir) / "corpus.jsonl")}


def read_queries(data_dir: Path) -> dict:
    """A BEIR query file, {id: text} in file order."""
    return {q["_id"]: q["text"] for q in read_jsonl(Path(data_dir) / "queries.jsonl")}


def tokens(text: str):
    return TOKEN.findall(text.lower())


def ndcg_at_10(ranked, relevant):
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(r + 2) for r, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2 ** g - 1) / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default=str(DATA / "arguana"))
    parser.add_argument("--qrels", default=None, help="default: DATASET/qrels/dev.tsv")
    parser.add_argument("--k1", type=float, default=0.9)
    parser.add_argument("--b", type=float, default=0.4)
    args = parser.parse_args()
    dataset = Path(args.dataset)
    qrels_path = Path(args.qrels) if args.qrels else dataset / "qrels" / "dev.tsv"
    for path in (dataset / "corpus.jsonl", dataset / "queries.jsonl", qrels_path):
        if not path.exists():
            sys.exit(f"missing {path}")
    corpus = read_corpus(dataset)
    queries = read_queries(dataset)
    qrels = {q: r for q, r in read_qrels(qrels_path).items() if q in queries}

    vocab, rows, cols, counts, lengths = {}, [], [], [], []
    for i, text in enumerate(corpus.values()):
        toks = tokens(text)
        lengths.append(len(toks))
        tf = {}
        for t in toks:
            k = vocab.setdefault(t, len(vocab))
            tf[k] = tf.get(k, 0) + 1
        rows += [i] * len(tf)
        cols += list(tf)
        counts += list(tf.values())
    n_docs = len(corpus)
    tf = sp.coo_matrix((counts, (rows, cols)), shape=(n_docs, len(vocab)))
    df = np.bincount(tf.col, minlength=len(vocab))
    lengths = np.array(lengths, dtype=float)
    ids = list(corpus)
    idfs = {"lucene": np.log(1 + (n_docs - df + 0.5) / (df + 0.5))}
    okapi = np.log((n_docs - df + 0.5) / (df + 0.5))
    idfs["rank_bm25"] = np.where(okapi < 0, 0.25 * okapi.mean(), okapi)

    lines = ["# BM25 cross-check on " + dataset.name, "",
             f"{len(qrels)} queries of `{os.path.relpath(qrels_path, ROOT)}`, {n_docs} documents, k1 {args.k1}, b {args.b}, "
             "lower-cased alphanumeric tokens. Command: `" + command_line("/usr/bin/python3", __file__, short=False) + "`",
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
    (RESULTS / "bm25_crosscheck.md").write_text(table)
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
