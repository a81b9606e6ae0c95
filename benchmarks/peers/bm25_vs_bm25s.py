"""Peer benchmark, BM25: counterpoint's BM25 (stage1="bm25") against bm25s (method "lucene") with the
library's tokens, k1 and b on ArguAna dev: nDCG@10 of both runs, top-10 overlap, and the
library/bm25s score ratio per hit. Pyserini is not run: it needs Java 21, which Debian 12 lacks."""
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import load_json, read_trec, write_trec  # noqa: E402
from metrics_vs_pytrec import ndcg_table, trec_sorted  # noqa: E402
from shared import K_CANDIDATES, RUN_DEPTH, set_texts, vectors  # noqa: E402


def library_bm25(cp, dense, spec):
    """The library's BM25 run on the BM25 set's texts. Index.search with query texts needs an encoder
    even for stage1="bm25" (an index from build_from_embeddings has none), so the index is saved and
    loaded back with one; the dense query encoding this forces is not timed."""
    work = Path(spec["work"])
    name = spec["bm25_set"]
    docs, queries = set_texts(work, name)
    E, = vectors(work, "lib", name, "docs_E")
    built = cp.Index.build_from_embeddings(docs["ids"], E, None, docs["texts"], encoder_id=dense.identity,
                                           kind="flat", bm25=True)
    saved = work / f"library_{name}_bm25_index"
    built.save(str(saved))
    index = cp.Index.load(str(saved), encoder=dense)
    result = index.search(queries["texts"], k=RUN_DEPTH, candidates=K_CANDIDATES, stage1="bm25", scorer="cosine")
    write_trec(work / f"library_{name}_bm25.trec", queries["ids"], result.ids, result.bm25, "counterpoint-bm25")


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
    docs, queries = set_texts(work, name)
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



def compare(report, work, qrels, spec):
    """report["bm25"]."""
    report["bm25"] = dict(bm25_comparison(work, None, qrels), k1=spec["bm25_k1"], b=spec["bm25_b"],
                          pyserini="skipped: needs Java 21, which Debian 12 does not ship")
    report["bm25"]["ndcg_difference"] = report["bm25"]["library_ndcg@10"] - report["bm25"]["bm25s_ndcg@10"]


def markdown(report):
    b = report["bm25"]
    return ["", f"## BM25 vs bm25s {report['packages'].get('bm25s')} (ArguAna, k1 {b['k1']}, b {b['b']}, "
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
            " Pyserini: " + b["pyserini"] + "."]
