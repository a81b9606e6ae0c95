"""Peer benchmark, metrics: counterpoint's ranking metrics (cp.evaluate per query and mean, and the
means `counterpoint eval` prints) against pytrec_eval, trec_eval's own C code, on every TREC run
under benchmarks/results (tmp/ included) and the runs the benchmark makes, to 1e-6; nDCG@10 of a run
by pytrec_eval for the other parts."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import RESULTS, ROOT, BenchmarkError, import_counterpoint, read_qrels, read_trec  # noqa: E402

METRIC_TOLERANCE = 1e-6
# counterpoint metric name -> pytrec_eval measure. mrr@10 is BEIR's MRR@10: recip_rank over the run
# cut at 10 (pytrec_eval's recip_rank alone looks at the whole run).
METRICS = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "mrr@10": "recip_rank", "p@r": "Rprec"}


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
    # pytrec_eval's side reads the qrels without the library, so a reader bug shows as a difference.
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



def ndcg_table(run_path, qrels):
    _, mean = pytrec_metrics(read_trec(run_path), qrels)
    return mean["ndcg@10"]


def compare(report, work, qrels_choices, log):
    """report["metric_sweep"]: every TREC run under benchmarks/results (tmp/ included) and this run's;
    a difference above METRIC_TOLERANCE (or the CLI's printed precision) is a failure."""
    cp = import_counterpoint()
    runs = sorted(set(RESULTS.glob("*.trec")) | set((RESULTS / "tmp").rglob("*.trec")) | set(work.glob("*.trec")))
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


def markdown(report):
    s = report["metric_sweep"]
    return ["", "## Metrics vs pytrec_eval", "",
            f"{s['runs_compared']} TREC runs compared (cp.evaluate per query and mean; `counterpoint eval` means, "
            f"printed to {s['cli_digits']} decimals); max |difference|: " +
            ", ".join(f"{m} {v:.2e}" for m, v in s["max_abs_difference"].items()) + "; CLI: " +
            ", ".join(f"{m} {v:.2e}" for m, v in s["cli_max_abs_difference"].items()) +
            f". Skipped: {len(s['skipped'])}."]
