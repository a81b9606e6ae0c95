#!/usr/bin/python3
"""Paper Table 5 / Figure 2 on SICK dev: mean cosine and mean Hoyer sparsity of the embedding
difference for contradiction, entailment and random sentence pairs, before (Es = use-lite-en) and
after SparseCL fine-tuning, plus a histogram of the Hoyer scores per pair class.

    PYTHONPATH=python /usr/bin/python3 benchmarks/tables/score_distributions.py \
        [--pairs ../shared/data/sick/pairs_dev.tsv] [--after benchmarks/results/tmp/models/sick-sparsecl-hoyer]

Writes benchmarks/results/score_distributions.{json,md,png} (or NAME.* with --results-name) and prints the table."""
import argparse
import csv
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

import counterpoint as cp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import DATA, MODELS, RESULTS, command_line  # noqa: E402


def load_pairs(path: Path, seed: int):
    """Contradiction and entailment pairs as labelled by SICK (sentence A, sentence B), and as
    many random pairs (an A sentence with the B sentence of another pair)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows or "entailment_label" not in rows[0]:
        raise SystemExit(f"{path}: expected a SICK pairs file with an entailment_label column")
    pairs = {"contradiction": [], "entailment": []}
    for r in rows:
        label = r["entailment_label"].strip().lower()
        if label in pairs:
            pairs[label].append((r["sentence_A"], r["sentence_B"]))
    rng = random.Random(seed)
    count = max(len(p) for p in pairs.values())
    randoms = []
    while len(randoms) < count:
        a, b = rng.sample(range(len(rows)), 2)
        randoms.append((rows[a]["sentence_A"], rows[b]["sentence_B"]))
    pairs["random"] = randoms
    return pairs


def pair_scores(encoder: "cp.Encoder", pairs):
    a = encoder.encode([p[0] for p in pairs])
    b = encoder.encode([p[1] for p in pairs])
    cos = np.array([cp.cosine(a[i], b[i:i + 1])[0] for i in range(len(pairs))])
    hoyer = np.array([cp.hoyer(a[i], b[i:i + 1], guard=False)[0] for i in range(len(pairs))])
    return cos, hoyer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default=str(DATA / "sick/pairs_dev.tsv"))
    parser.add_argument("--before", default=str(MODELS / "use-lite-en"))
    parser.add_argument("--after", default=str(RESULTS / "tmp/models/sick-sparsecl-hoyer"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--results-name", default="score_distributions",
                        help="writes benchmarks/results/NAME.{json,md,png}")
    args = parser.parse_args()
    for flag, path in (("--pairs", args.pairs), ("--before", args.before), ("--after", args.after)):
        if not Path(path).exists():
            raise SystemExit(f"{flag}: {path} does not exist (the SparseCL model comes from benchmarks/tables/contradiction_table.sh)")

    started = time.time()
    pairs = load_pairs(Path(args.pairs), args.seed)
    models = {f"before ({Path(args.before).name})": args.before, f"after ({Path(args.after).name})": args.after}
    stats, samples = [], {}
    for model_label, model_dir in models.items():
        encoder = cp.Encoder.load(model_dir, threads=args.threads)
        for kind, kind_pairs in pairs.items():
            cos, hoyer = pair_scores(encoder, kind_pairs)
            samples[(model_label, kind)] = hoyer
            stats.append({"model": model_label, "pairs": kind, "count": len(kind_pairs),
                          "mean_cosine": float(cos.mean()), "mean_hoyer": float(hoyer.mean()),
                          "std_hoyer": float(hoyer.std())})

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, model_label in zip(axes, models):
        panel = np.concatenate([samples[(model_label, kind)] for kind in pairs])
        bins = np.linspace(panel.min(), panel.max(), 31)  # shared, so the classes compare bin by bin
        for kind in pairs:
            ax.hist(samples[(model_label, kind)], bins=bins, alpha=0.45, label=kind, density=True,
                    histtype="stepfilled", edgecolor="black", linewidth=0.5)
        ax.set_title(f"Es = {model_label}")
        ax.set_xlabel("Hoyer(Es(a) - Es(b))")
    axes[0].set_ylabel("density")
    axes[0].legend()
    fig.suptitle("SICK dev pairs: Hoyer sparsity of the embedding difference")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{args.results_name}.png", dpi=110)

    command = command_line("PYTHONPATH=python /usr/bin/python3", __file__, short=False)
    seconds = round(time.time() - started, 1)
    (RESULTS / f"{args.results_name}.json").write_text(json.dumps(
        {"benchmark": "score_distributions", "pairs_file": args.pairs, "models": models, "seed": args.seed,
         "seconds": seconds, "command": command, "rows": stats}, indent=2) + "\n")
    lines = ["# SICK dev pair scores before and after SparseCL (paper Table 5)", "",
             f"Command (all rows, {seconds} s): `{command}`", "",
             f"Figure: {args.results_name}.png. Random pairs: sentence A of one pair with sentence B of another "
             f"(seed {args.seed}).", "",
             "| Es | pairs | count | mean cosine | mean Hoyer | std Hoyer |", "|---|---|---|---|---|---|"]
    for s in stats:
        lines.append(f"| {s['model']} | {s['pairs']} | {s['count']} | {s['mean_cosine']:.4f} | "
                     f"{s['mean_hoyer']:.4f} | {s['std_hoyer']:.4f} |")
    table = "\n".join(lines) + "\n"
    (RESULTS / f"{args.results_name}.md").write_text(table)
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
