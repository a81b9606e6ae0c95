"""Peer benchmark, search: Index.search (cosine; cos + alpha * Hoyer over K = 1000 candidates)
against faiss top-1000 + the NumPy float32 Hoyer rerank, both given the same query vectors.
Single-query p50/p99 and batched queries/s on ArguAna dev and on a synthetic corpus (flat, and IVF
with counterpoint's nlist/nprobe); end to end with the query text encoded inside the timed call; and
the quality runs: nDCG@10 of both pipelines, which must agree to 1e-3."""
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import (BenchmarkError, hoyer_rerank, import_counterpoint, time_batched, time_single,  # noqa: E402
                   unit_rows, write_trec)
from metrics_vs_pytrec import ndcg_table  # noqa: E402
from shared import K_CANDIDATES, RUN_DEPTH, SYNTHETIC_SEED, peer_setup, ratio, set_texts, vectors  # noqa: E402

QUALITY_TOLERANCE = 1e-3


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


def time_searches(row, scorer, one, batch, count, repeats):
    """row[<scorer>_single] and row[<scorer>_batched]: one(i) per query, batch() over all of them."""
    row[f"{scorer}_single"] = time_single(one, count)
    row[f"{scorer}_batched"] = time_batched(batch, count, repeats)


# ---------------------------------------------------------------------------------------------
# Library side: counterpoint's Index


def library_calls(index, Q, QS, scorer, alpha):
    """One query, and all queries, through Index.search (k 10, K candidates)."""
    extra = {"alpha": alpha} if scorer == "hoyer" else {}

    def one(i):
        more = {"sparse_queries": QS[i:i + 1]} if scorer == "hoyer" else {}
        index.search(Q[i:i + 1], k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

    def batch():
        more = {"sparse_queries": QS} if scorer == "hoyer" else {}
        return index.search(Q, k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

    return one, batch


def library_search(cp, dense, sparse, spec):
    """Per set: the quality runs (TREC files) and, on the latency set, the timings."""
    work = Path(spec["work"])
    alpha = spec["alpha"]
    out = {}
    for name in spec["sets"]:
        docs, queries = set_texts(work, name)
        E, S, Q, QS = vectors(work, "lib", name, "docs_E", "docs_Es", "queries_E", "queries_Es")
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
                time_searches(row, scorer, *library_calls(index, Q, QS, scorer, alpha), n, spec["repeats"])
                # End to end: the query text is encoded inside the timed call (E, and Es for Hoyer).
                texts = queries["texts"]

                def e2e(i, scorer=scorer, extra=extra):
                    q = dense.encode([texts[i]], batch_size=32, query=True)
                    more = {}
                    if scorer == "hoyer":
                        more = {"sparse_queries": sparse.encode([texts[i]], batch_size=32, query=True)}
                    index.search(q, k=10, candidates=K_CANDIDATES, scorer=scorer, **extra, **more)

                row[f"{scorer}_end_to_end"] = time_single(e2e, min(n, spec["e2e_queries"]))
        out[name] = row
    return out


def library_synthetic(spec):
    cp = import_counterpoint()
    E, S, Q, QS = synthetic(spec["n_docs"], spec["n_queries"], spec["dim"], SYNTHETIC_SEED)
    ids = [str(i) for i in range(len(E))]
    out = {}
    for kind in spec["kinds"]:
        start = time.perf_counter()
        index = cp.Index.build_from_embeddings(ids, E, S, encoder_id="external@synthetic-E",
                                               sparse_encoder_id="external@synthetic-Es",
                                               kind=kind)
        row = {"build_s": time.perf_counter() - start, "memory_bytes": index.memory_bytes}
        for scorer in ("cosine", "hoyer"):
            one, batch = library_calls(index, Q, QS, scorer, spec["alpha"])
            time_searches(row, scorer, one, batch, len(Q), spec["repeats"])
            np.save(Path(spec["work"]) / f"lib_synthetic_{kind}_{scorer}_top10.npy", batch().slots)
        out[kind] = row
        del index
    return out


# ---------------------------------------------------------------------------------------------
# Peer side: faiss-cpu and NumPy


class PeerPipeline:
    """faiss top-K by inner product over L2-normalised E, then (for Hoyer) a NumPy rerank of the K
    candidates over exported Es rows. Ties keep faiss' order (stable sort)."""

    def __init__(self, faiss, index, sparse_rows, alpha, candidates=K_CANDIDATES):
        self.faiss, self.index, self.S, self.alpha, self.candidates = faiss, index, sparse_rows, alpha, candidates

    def search(self, Q, k, scorer, QS=None, chunk=64):
        ids_out, scores_out = [], []
        for start in range(0, len(Q), chunk):
            q = Q[start:start + chunk]
            D, I = self.index.search(q, self.candidates)
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

    def calls(self, Q, QS, scorer):
        """One query, and all queries, through the pipeline (k 10)."""
        return (lambda i: self.search(Q[i:i + 1], 10, scorer, QS[i:i + 1])), (lambda: self.search(Q, 10, scorer, QS))


def flat_pipeline(faiss, E, S, alpha):
    index = faiss.IndexFlatIP(E.shape[1])
    index.add(E)
    return PeerPipeline(faiss, index, S, alpha)


def peer_search(faiss, spec):
    """Per set: the quality runs with the peer's own E and, on the latency set, the timings over the
    library's vectors."""
    from sentence_transformers import SentenceTransformer
    work = Path(spec["work"])
    alpha = spec["alpha"]
    out = {}
    for name in spec["sets"]:
        docs, queries = set_texts(work, name)
        S, QS = vectors(work, "lib", name, "docs_Es", "queries_Es")
        # Quality: the peer's own E (sentence-transformers) with the library's exported Es.
        E, Q = vectors(work, "peer", name, "docs_E", "queries_E")
        pipe = flat_pipeline(faiss, E, S, alpha)
        doc_ids = np.asarray(docs["ids"], dtype=object)
        for scorer in ("cosine", "hoyer"):
            I, D = pipe.search(Q, RUN_DEPTH, scorer, QS)
            write_trec(work / f"peer_{name}_{scorer}.trec", queries["ids"],
                       [[doc_ids[i] if i >= 0 else None for i in row] for row in I], D, f"peer-{scorer}")
        row = {}
        if name == spec["latency_set"]:
            # Latency: the SAME vectors as the library side (counterpoint's E and Es).
            E, Q = vectors(work, "lib", name, "docs_E", "queries_E")
            pipe = flat_pipeline(faiss, E, S, alpha)
            n = len(Q)
            for scorer in ("cosine", "hoyer"):
                time_searches(row, scorer, *pipe.calls(Q, QS, scorer), n, spec["repeats"])
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
        out[name] = row
    return out


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
            time_searches(row, scorer, *pipe.calls(Q, QS, scorer), len(Q), spec["repeats"])
            np.save(Path(spec["work"]) / f"peer_synthetic_{kind}_{scorer}_top10.npy", pipe.search(Q, 10, scorer, QS)[0])
        out[kind] = row
        del index, pipe
    return out


# ---------------------------------------------------------------------------------------------
# Orchestrator: the comparison and its part of the report


def compare(report, work, sets, results, kinds, n_synth, q_synth):
    """report["search"] (latency rows, library / peer) and report["synthetic"] (build times, top-10
    overlap, IVF recall against flat)."""
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
    for kind in kinds:
        add_rows(f"synthetic {n_synth} x 384 ({kind})", lib_y[kind], peer_y[kind])
        info = {"library_build_s": lib_y[kind]["build_s"], "peer_build_s": peer_y[kind]["build_s"],
                "parameters": peer_y[kind]["parameters"]}
        for scorer in ("cosine", "hoyer"):
            a = np.load(work / f"lib_synthetic_{kind}_{scorer}_top10.npy")
            b = np.load(work / f"peer_synthetic_{kind}_{scorer}_top10.npy")
            info[f"{scorer}_top10_overlap"] = float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(a, b)]))
            if kind != "flat" and "flat" in kinds:
                for side, prefix in (("library", "lib"), ("peer", "peer")):
                    exact = np.load(work / f"{prefix}_synthetic_flat_{scorer}_top10.npy")
                    got = a if side == "library" else b
                    info[f"{side}_{scorer}_recall10_vs_flat"] = float(
                        np.mean([len(set(x) & set(y)) / 10 for x, y in zip(got, exact)]))
        synthetic_info[kind] = info
    report["search"] = search_rows
    report["synthetic"] = {"docs": n_synth, "queries": q_synth, "seed": SYNTHETIC_SEED, "kinds": synthetic_info}


def compare_quality(report, work, sets, alpha):
    """report["quality"]: nDCG@10 of both pipelines per set and scorer; a difference above
    QUALITY_TOLERANCE is a failure."""
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


def markdown(report):
    lines = ["", "## Search (same query vectors on both sides, k 10, K 1000)", "",
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
    return lines


def quality_markdown(report):
    lines = ["", "## Quality (nDCG@10, pytrec_eval on both runs, query's own id removed)", "",
             "| set | scorer | library | peer | ndcg_difference |", "|---|---|---|---|---|"]
    for q in report["quality"]:
        lines.append(f"| {q['set']} | {q['scorer']} | {q['library_ndcg@10']:.4f} | {q['peer_ndcg@10']:.4f} | "
                     f"{q['ndcg_difference']:+.2e} |")
    return lines
