#!/usr/bin/env bash
# Re-runs one evaluation row of benchmarks/results/*.json on other qrels with its recorded alpha
# fixed; see benchmarks/lib/rerun_row.py.
#
#   benchmarks/rerun_row.sh LABEL --set SET --qrels FILE --out RUN.trec [--from RESULTS_STEM]
set -euo pipefail
exec /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/lib/rerun_row.py" "$@"
