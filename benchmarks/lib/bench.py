"""What the Python benchmarks share (not a benchmark itself): the repository's paths, commands as
result rows record them, the qrels and TREC files read without the library (for the checks that
stand apart from it; every other script reads data sets with cp.load_corpus / load_queries /
load_qrels), timing, and the NumPy reference formulas (cosine, Hoyer with the library's clamps and
guard) that the NumPy baselines and the peer pipeline run.

A script imports it after putting this folder on its path:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
    import bench
"""
import json
import math
import os
import resource
import shlex
import sys
import time
from pathlib import Path

try:
    import numpy as np
except ImportError:  # make_table.py and rerun_row.py need none of the formulas below
    np = None

LIB = Path(__file__).resolve().parent
BENCH = LIB.parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
DATA = ROOT.parent / "shared" / "data"   # the data sets beside the checkout
MODELS = ROOT / "models" / "installed"
CANDIDATES = 1000  # stage-1 K, as `counterpoint run` uses (the reference's FAISS top-K, K = 1000)


class BenchmarkError(RuntimeError):
    """A precondition or a cross-check failed; the script prints it and exits non-zero."""


# ---------------------------------------------------------------------------------------------
# Paths and recorded commands


def shorten(arg: str) -> str:
    """Paths in commands are recorded relative to the repository root (data as ../shared/...), so a
    command reads the same on any checkout."""
    if not arg.startswith("/") or not Path(arg).exists():
        return arg
    resolved = Path(arg).resolve()
    if resolved == ROOT.parent or ROOT.parent in resolved.parents:
        return os.path.relpath(resolved, ROOT)
    return arg


def script_path(file: str) -> str:
    """A script's path as commands give it: relative to the repository root."""
    return os.path.relpath(Path(file).resolve(), ROOT)


def this_python() -> str:
    """The running interpreter, relative to the repository root when it lives in the checkout (.venv)."""
    return os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(str(ROOT)) else sys.executable


def command_line(prefix: str, script_file: str, quote=True, short=True) -> str:
    """The command that started this run, as a result records it: PREFIX (the interpreter, with any
    environment it needs), the script relative to the repository root, then this run's arguments
    (shell-quoted, paths shortened, unless told otherwise)."""
    args = [shorten(a) if short else a for a in sys.argv[1:]]
    return " ".join([prefix, script_path(script_file)] + [shlex.quote(a) if quote else a for a in args])


# ---------------------------------------------------------------------------------------------
# Files: JSON, qrels, TREC runs


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path):
    """BEIR qrels TSV (header optional), 3 or 4 columns -> {query: {doc: grade}}. Only for the checks
    that must not read through the library they check (metrics_vs_pytrec's pytrec_eval side,
    bm25_crosscheck); the benchmarks read qrels with cp.load_qrels."""
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


def write_trec(path, query_ids, doc_ids, scores, name):
    """TREC run lines; float32 scores written with 9 significant digits, so they read back exactly."""
    with open(path, "w") as f:
        for qid, docs, values in zip(query_ids, doc_ids, scores):
            for rank, (doc, value) in enumerate(zip(docs, values), 1):
                if doc is None or doc == "" or not math.isfinite(float(value)):
                    continue
                f.write(f"{qid} Q0 {doc} {rank} {float(value):.9g} {name}\n")


def read_trec(path):
    """A TREC run -> {query: {doc: score}} (the binding has no TREC run reader)."""
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


def import_counterpoint():
    """The counterpoint package from $COUNTERPOINT_PYTHON (a folder holding counterpoint/), else
    <repo>/python."""
    folder = os.environ.get("COUNTERPOINT_PYTHON") or str(ROOT / "python")
    if not (Path(folder) / "counterpoint" / "__init__.py").exists():
        raise BenchmarkError(f"no counterpoint package under {folder} (set COUNTERPOINT_PYTHON, or run "
                             "./setup.sh build so that python/counterpoint/_core*.so exists)")
    sys.path.insert(0, folder)
    import counterpoint as cp
    return cp


# ---------------------------------------------------------------------------------------------
# Timing


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


def percentiles(ms, digits=None):
    """p50, p99 and mean of per-call milliseconds, rounded to `digits` decimals if given."""
    a = np.asarray(ms, dtype=np.float64)
    out = {"p50_ms": float(np.percentile(a, 50)), "p99_ms": float(np.percentile(a, 99)), "mean_ms": float(a.mean())}
    return out if digits is None else {k: round(v, digits) for k, v in out.items()}


def time_single(search_one, count):
    """Per-query wall time of search_one(i) for i < count, after one untimed warm-up call."""
    search_one(0)
    times = []
    for i in range(count):
        start = time.perf_counter()
        search_one(i)
        times.append(time.perf_counter() - start)
    return {"queries": len(times), **percentiles([s * 1e3 for s in times])}


def time_batched(search_all, count, repeats):
    """Queries/s of one call that searches all `count` queries; best of `repeats` (warm-up first)."""
    search_all()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        search_all()
        best = min(best, time.perf_counter() - start)
    return {"queries": count, "seconds": best, "queries_per_s": count / best}


def ms_per_call(call, repeats):
    """Mean wall milliseconds of `repeats` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats * 1000.0


# ---------------------------------------------------------------------------------------------
# NumPy reference formulas (the library's, step for step)


def unit(rows):
    """Rows scaled to unit L2 norm, float32."""
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def unit_rows(rng, rows, dim):
    """`rows` random float32 unit rows of width `dim`."""
    return unit(rng.standard_normal((rows, dim), dtype=np.float32))


def cosine_scores(query, rows):
    """True cosine of `query` (d) with each of `rows` (K, d): 0 for a zero-norm side, clipped to [-1, 1]."""
    denominator = np.linalg.norm(rows, axis=-1) * np.linalg.norm(query)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator == 0, 0.0, np.clip((rows @ query) / denominator, -1.0, 1.0))


def hoyer_scores(q_sparse, c_sparse, guard=1e-3, guard_value=-1e9):
    """Hoyer(Es(q) - Es(c)) in float32 with the reference clamps (|x|_1 >= sqrt(d) 1e-6,
    |x|_2 >= 1e-6), clipped to [0, 1], and the near-identical guard (|x|_2 < guard -> guard_value)
    that counterpoint applies by default. q_sparse (..., d), c_sparse (..., K, d) -> (..., K)."""
    d = q_sparse.shape[-1]
    root = np.float32(math.sqrt(d))
    diff = q_sparse[..., None, :] - c_sparse
    l1 = np.maximum(np.abs(diff).sum(axis=-1), root * np.float32(1e-6))
    l2 = np.sqrt(np.einsum("...d,...d->...", diff, diff))
    hoyer = np.clip((root - l1 / np.maximum(l2, np.float32(1e-6))) / (root - 1), 0, 1)
    return np.where(l2 < guard, np.float32(guard_value), hoyer)


def hoyer_rerank(cosine, q_sparse, c_sparse, alpha, guard=1e-3, guard_value=-1e9):
    """The final score cos + alpha * Hoyer(Es(q) - Es(c)) in float32 (see hoyer_scores).
    q_sparse (n, d), c_sparse (n, K, d), cosine (n, K)."""
    return (cosine + np.float32(alpha) * hoyer_scores(q_sparse, c_sparse, guard, guard_value)).astype(np.float32)
