"""Re-runs one evaluation row of benchmarks/results/*.json on other qrels, with the alpha the row
chose on dev fixed (never re-tuned), writes the TREC run and prints the metrics.

A row is found by its `label` and `set` among the rows of `kind: eval`; its recorded `command`
(a `counterpoint run` line on dev qrels) is replayed with `--qrels` replaced, `--tune-alpha`
replaced by `--alpha <recorded alpha>` and `--out` added. A model directory the command names
that is absent is first re-trained by the recorded train row whose command writes it (`--out`).

    benchmarks/rerun_row.sh "cosine (zero-shot all-minilm-l6-v2)" --set sick \\
        --qrels ../shared/data/sick/qrels/dev.tsv --out /tmp/run.trec [--from contradiction_table_all-minilm-l6-v2]
"""
import argparse
import glob
import json
import os
import pathlib
import shlex
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import RESULTS, ROOT  # noqa: E402
MODEL_OPTIONS = ("--model", "--sparse-model")


def rows(stem="*"):
    """Every row of the results files (all, or benchmarks/results/<stem>.json), with its file."""
    for path in sorted(glob.glob(str(RESULTS / f"{stem}.json"))):
        try:
            data = json.loads(pathlib.Path(path).read_text())
        except ValueError as error:
            raise SystemExit(f"rerun_row: {path} is not valid JSON: {error}")
        listed = data.get("rows") if isinstance(data, dict) else data
        if isinstance(listed, list):
            for row in listed:
                if isinstance(row, dict):
                    yield path, row


def option_value(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


def without_option(argv, name, takes_value=True):
    if name not in argv:
        return list(argv)
    i = argv.index(name)
    return argv[:i] + argv[i + (2 if takes_value else 1):]


def replay_command(row, qrels, out):
    argv = shlex.split(row["command"])
    if "/usr/bin/time" in argv[0]:
        argv = argv[2:]
    if len(argv) < 2 or not argv[0].endswith("counterpoint") or argv[1] != "run":
        raise SystemExit(f"rerun_row: row '{row['label']}' was not made by `counterpoint run`: {row['command']}")
    argv = without_option(argv, "--qrels")
    argv = without_option(argv, "--out")
    if "--tune-alpha" in argv or ("--scorer" in argv and option_value(argv, "--scorer") != "cosine"):
        if "alpha" not in row:
            raise SystemExit(f"rerun_row: row '{row['label']}' has a sparsity term but records no alpha")
        argv = without_option(argv, "--tune-alpha")
        argv = without_option(argv, "--alpha") + ["--alpha", repr(float(row["alpha"]))]
    return argv + ["--qrels", qrels, "--out", out]


def ensure_models(argv, all_rows, run=subprocess.run):
    """Re-trains, by its recorded command, every model directory the command names that is absent,
    and first whatever absent model that training starts from (`--base`: a head over a fine-tuned
    network needs the network)."""
    for name in MODEL_OPTIONS + ("--base",):
        directory = option_value(argv, name)
        if directory is None or "/" not in directory or (ROOT / directory).exists():
            continue  # an installed model name, or present
        trainers = [row for _, row in all_rows if row.get("kind") == "train"
                    and option_value(shlex.split(row.get("command", "")), "--out") == directory]
        if not trainers:
            raise SystemExit(f"rerun_row: {directory} is missing and no train row records a command writing it")
        command = shlex.split(trainers[0]["command"])
        if "/usr/bin/time" in command[0]:
            command = command[2:]
        ensure_models(command, all_rows, run)
        print(f"[rerun_row] {directory} is missing: re-training it by its recorded command", file=sys.stderr)
        print("  " + " ".join(shlex.quote(c) for c in command), file=sys.stderr)
        run(command, cwd=ROOT, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("label")
    parser.add_argument("--set", required=True, dest="dataset")
    parser.add_argument("--qrels", required=True)
    parser.add_argument("--out", required=True, help="TREC run file to write")
    parser.add_argument("--from", dest="stem", default="*",
                        help="look only in benchmarks/results/STEM.json (when a label is in several files)")
    args = parser.parse_args()
    all_rows = list(rows(args.stem))
    found = [(path, row) for path, row in all_rows
             if row.get("kind") == "eval" and row.get("label") == args.label and row.get("set") == args.dataset]
    if not found:
        labels = sorted({row["label"] for _, row in all_rows if row.get("kind") == "eval" and row.get("set") == args.dataset})
        raise SystemExit(f"rerun_row: no eval row '{args.label}' for set '{args.dataset}'. Rows of that set:\n  " +
                         "\n  ".join(labels))
    commands = {row["command"] for _, row in found}
    if len(commands) > 1:
        raise SystemExit(f"rerun_row: {len(found)} rows '{args.label}' ({args.dataset}) with different commands in " +
                         ", ".join(sorted({os.path.relpath(p, ROOT) for p, _ in found})) +
                         ": choose one with --from STEM")
    path, row = found[0]
    argv = replay_command(row, os.path.abspath(args.qrels), os.path.abspath(args.out))
    ensure_models(argv, all_rows)
    print(f"[rerun_row] {os.path.relpath(path, ROOT)}: '{row['label']}' ({row['set']}), dev nDCG@10 "
          f"{row.get('ndcg@10')}" + (f", alpha {row['alpha']}" if "alpha" in row else ""), file=sys.stderr)
    print("  " + " ".join(shlex.quote(c) for c in argv), file=sys.stderr)
    sys.exit(subprocess.run(argv, cwd=ROOT).returncode)


if __name__ == "__main__":
    main()
