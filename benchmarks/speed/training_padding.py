#!/usr/bin/env python3
# Usage: COUNTERPOINT_MODELS=models/installed .venv/bin/python benchmarks/speed/training_padding.py ../shared/data/arguana
"""Padded tokens per whole-network training batch on ArguAna train texts: one batch padded to its
longest against length-sorted chunks of 16 (random batches of 32 anchors and 64 documents)."""
import json, random, sys
import counterpoint as cp
enc = cp.Encoder.load("all-minilm-l6-v2")
data = sys.argv[1]
qrels = [l.split("\t") for l in open(f"{data}/qrels/train.tsv").read().splitlines()[1:]]
corpus = {}
for line in open(f"{data}/corpus.jsonl"):
    d = json.loads(line); corpus[d["_id"]] = (d.get("title", "") + " " + d["text"]).strip()
ids = sorted({q for q, _, _ in qrels} | {c for _, c, _ in qrels})
known = [i for i in ids if i in corpus]
length = {i: len(t) for i, t in zip(known, enc.tokenize([corpus[i] for i in known], 256))}
anchors = [q for q, _, _ in qrels if q in length]; docs = [c for _, c, _ in qrels if c in length]
def padded(lengths, chunk):
    s = sorted(lengths); return sum(len(s[i:i + chunk]) * max(s[i:i + chunk]) for i in range(0, len(s), chunk))
rng = random.Random(42); whole = chunked = real = 0
for _ in range(200):
    for pool, n in ((anchors, 32), (docs, 64)):
        b = [length[x] for x in rng.sample(pool, n)]
        whole += padded(b, n); chunked += padded(b, 16); real += sum(b)
print(f"tokens {real}, padded to the batch's longest {whole} ({whole/real:.2f}x), in chunks of 16 {chunked} ({chunked/real:.2f}x)")
