#!/usr/bin/python3
"""Result tables of the benchmark scripts: `add-row` parses one CLI log into a JSON row (with the
exact command that produced it); `write` turns the rows into results/<name>.json and <name>.md
and prints the markdown table."""
import argparse
import json
import re
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import RESULTS, shorten  # noqa: E402


def parse_log(text: str) -> dict:
    found = {}
    m = re.search(r"^ndcg@10\t([0-9.]+)$", text, re.M)
    if m:
        found["ndcg@10"] = float(m.group(1))
    for name in ("recall@100", "mrr@10", "acc@1"):
        m = re.search(rf"^{re.escape(name)}\t([0-9.]+)$", text, re.M)
        if m:
            found[name] = float(m.group(1))
    m = re.search(r"^best alpha ([0-9.eE+-]+)\s+nDCG@10 ([0-9.]+)", text, re.M)
    if m:
        found["alpha"] = float(m.group(1))
        found["tuned_ndcg@10"] = float(m.group(2))
    # `counterpoint run` states the scorer and, for a sparsity scorer, the alpha it used:
    # "queries 160  hits per query 101  scorer sparsity (hoyer), alpha 1.035 (given)".
    m = re.search(r"^queries (\d+)\s.*?scorer (\S+)[^\n]*?,? alpha ([0-9.eE+-]+)", text, re.M)
    if m:
        found["queries"] = int(m.group(1))
        if m.group(2) not in ("cosine", "mean", "maxsim", "alignment", "verifier"):
            found.setdefault("alpha", float(m.group(3)))
    # "trained 63 steps on 2015 triples, final loss 4.09069, 1.2 triples/s -> DIR" ("on N triples" since
    # the trainer reports the triple count).
    m = re.search(r"^trained (\d+) steps(?: on (\d+) triples)?, final loss ([0-9.eE+-]+|nan), ([0-9.]+) triples/s",
                  text, re.M)
    if m:
        found.update(steps=int(m.group(1)), final_loss=float(m.group(3)), triples_per_second=float(m.group(4)))
        if m.group(2):
            found["triples"] = int(m.group(2))
    return found


def add_row(args: argparse.Namespace) -> None:
    text = Path(args.log).read_text()
    err = Path(args.log + ".err")
    row = {"label": args.label, "set": args.set, "kind": args.kind, "seconds": round(float(args.seconds), 1),
           "command": " ".join(shlex.quote(shorten(a)) for a in args.command)}
    row.update(parse_log(text))
    if err.exists():
        m = re.search(r"^training on (\d+) triples", err.read_text(), re.M)
        if m:
            row["triples"] = int(m.group(1))
        m = re.search(r"User time \(seconds\): ([0-9.]+)\n\s*System time \(seconds\): ([0-9.]+)", err.read_text())
        if m:
            row["cpu_seconds"] = round(float(m.group(1)) + float(m.group(2)), 1)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err.read_text())
        if m:
            row["peak_rss_mib"] = round(int(m.group(1)) / 1024, 1)
    with open(args.rows, "a") as out:
        out.write(json.dumps(row) + "\n")


SCORE_COLUMNS = {"ndcg@10", "recall@100", "mrr@10", "acc@1", "alpha", "tuned_ndcg@10", "final_loss"}


def fmt(column: str, value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}" if column in SCORE_COLUMNS else f"{value:.1f}"
    return str(value)


def write(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.rows).read_text().splitlines() if line.strip()]
    columns = args.columns.split(",")
    meta = json.loads(args.meta) if args.meta else {}
    out_dir = RESULTS
    lines = [f"# {args.title}", ""]
    if args.note:
        lines += [args.note, ""]
    lines.append("| " + " | ".join(columns + ["command"]) + " |")
    lines.append("|" + "---|" * (len(columns) + 1))
    for row in rows:
        row["command"] = " ".join(shlex.quote(shorten(a)) for a in shlex.split(row["command"]))
        cells = [fmt(c, row.get(c)) for c in columns]
        lines.append("| " + " | ".join(cells) + " | `" + row["command"].replace("|", "\\|") + "` |")
    table = "\n".join(lines) + "\n"
    (out_dir / f"{args.name}.json").write_text(json.dumps({"benchmark": args.name, **meta, "rows": rows}, indent=2) + "\n")
    (out_dir / f"{args.name}.md").write_text(table)
    sys.stdout.write(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    a = sub.add_parser("add-row")
    for flag in ("--rows", "--label", "--set", "--kind", "--log", "--seconds"):
        a.add_argument(flag, required=True)
    a.add_argument("command", nargs=argparse.REMAINDER)
    w = sub.add_parser("write")
    w.add_argument("--rows", required=True)
    w.add_argument("--name", required=True)
    w.add_argument("--title", required=True)
    w.add_argument("--columns", required=True)
    w.add_argument("--note", default="")
    w.add_argument("--meta", default="")
    args = parser.parse_args()
    if args.action == "add-row":
        if args.command and args.command[0] == "--":
            args.command = args.command[1:]
        add_row(args)
    else:
        write(args)


if __name__ == "__main__":
    main()
