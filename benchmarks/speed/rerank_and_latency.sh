#!/usr/bin/env bash
# Per-query latency (p50/p99) on a dev split (ArguAna by default), K = 1000 candidates, cosine only versus cosine +
# alpha * Hoyer, with and without query encoding (benchmarks/speed/rerank_latency.py through the Python
# binding), plus the stage-2 kernels alone (rerank_kernel_bench: one query against 1000 candidates).
#
#   benchmarks/speed/rerank_and_latency.sh [--data DIR] [--set arguana] [--qrels FILE] [--sparse-model DIR]
#       [--max-queries 500]
#
# Needs the set's index cached by contradiction_table.sh (E = use-lite-en, Es = its SparseCL model).
# Writes benchmarks/results/rerank_and_latency.{json,md}.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SET=arguana QRELS="" ES="" MAX_QUERIES=500
parse_options --set SET --qrels QRELS --sparse-model ES --max-queries MAX_QUERIES -- "$@"
QRELS="${QRELS:-$DATA/$SET/qrels/dev.tsv}"
ES="${ES:-$CACHE/models/$SET-sparsecl-hoyer}"
INDEX="$CACHE/indexes/$SET-use-lite+sparsecl-hoyer"
require_file "$QRELS" "qrels"
require_file "$ES/manifest.json" "SparseCL model (run benchmarks/tables/contradiction_table.sh first)"
require_file "$INDEX" "cached ArguAna index (run benchmarks/tables/contradiction_table.sh first)"
# The alpha tuned on dev by contradiction_table.sh, so the timed configuration is the reported one.
ALPHA=$("$PY" -c "
import json, sys
rows = json.load(open('$RESULTS/contradiction_table.json'))['rows']
print(next((r['alpha'] for r in rows if r['set'] == '$SET' and r.get('alpha') is not None), 1.0))")

LOG="$CACHE/logs/latency.json"
COMMAND=(env PYTHONPATH="$ROOT/python" "$PY" "$BENCH_DIR/speed/rerank_latency.py" --dataset "$DATA/$SET" --qrels "$QRELS"
  --index "$INDEX" --sparse-model "$ES" --alpha "$ALPHA" --candidates 1000 --max-queries "$MAX_QUERIES" --threads "$THREADS")
echo ">> per-query latency (${MAX_QUERIES} queries max)" >&2
start=$(date +%s)
"${COMMAND[@]}" > "$LOG"
echo "   $(( $(date +%s) - start )) s" >&2

KERNEL_BIN="${RERANK_BENCH:-$ROOT/build-bench/bin/rerank_kernel_bench}"
KERNEL_LOG="$CACHE/logs/rerank_kernel_bench.json"
if [[ -x "$KERNEL_BIN" ]]; then
  echo ">> rerank_kernel_bench" >&2
  "$KERNEL_BIN" --benchmark_format=json --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > "$KERNEL_LOG"
else
  echo "rerank_kernel_bench not built ($KERNEL_BIN): cmake --build build-bench --target rerank_kernel_bench" >&2
  rm -f "$KERNEL_LOG"
fi

LIB_DIR="$LIB_DIR" "$PY" - "$LOG" "$KERNEL_LOG" "$KERNEL_BIN" "${COMMAND[@]}" <<'PYEOF'
import json, os, shlex, sys
sys.path.insert(0, os.environ["LIB_DIR"])
from bench import RESULTS, shorten
log, kernel_log, kernel_bin, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
data = json.load(open(log))
cmd = " ".join(shlex.quote(shorten(a)) for a in command)
kernel_cmd = shlex.quote(shorten(kernel_bin)) + " --benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
lines = [f"# Per-query latency, {data['dataset']} dev ({data['queries']} queries), K = {data['candidates']}, "
         f"{data['index_size']} documents ({data['index_kind']} index), {data['threads']} threads", "",
         "Without encoding = the search call minus the encode time of the same query (E, plus Es for Hoyer) "
         "measured just before it; the machine's 2 cores were shared with other jobs.", "",
         "| scorer | query encoding | p50 ms | p99 ms | mean ms | command |", "|---|---|---|---|---|---|"]
for r in data["rows"]:
    lines.append(f"| {r['scorer']} | {r['query_encoding']} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
                 f"{r['mean_ms']:.2f} | `{cmd}` |")
kernels = []
if os.path.exists(kernel_log):
    for b in json.load(open(kernel_log))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            kernels.append({"name": b["run_name"], "median_us": round(b["real_time"], 2)})
    lines += ["", "Stage-2 kernels alone, one query against 1000 candidates of width 512 (median of 5):", "",
              "| kernel | µs | command |", "|---|---|---|"]
    lines += [f"| {k['name']} | {k['median_us']} | `{kernel_cmd}` |" for k in kernels]
data.update(command=cmd, kernels=kernels, kernel_command=kernel_cmd if kernels else None)
out = RESULTS
(out / "rerank_and_latency.json").write_text(json.dumps({"benchmark": "rerank_and_latency", **data}, indent=2) + "\n")
table = "\n".join(lines) + "\n"
(out / "rerank_and_latency.md").write_text(table)
sys.stdout.write(table)
PYEOF
