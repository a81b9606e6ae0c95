"""Shared parts of the SICK dev benchmarks written in Python (confounders.py, corpus_cleaning.py):
the common command-line flags, the entailment/contradiction relations of the labelled SICK pairs
mapped onto corpus ids, one cached index with E and Es over the corpus, searches with per-query
exclude lists, and the result files (results/<name>.json and <name>.md with the exact command).

Not a benchmark itself; the two scripts import it."""
import argparse
import collections
import csv
import hashlib
import json
import random
import sys
import time
from pathlib import Path

import counterpoint as cp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import CANDIDATES, DATA as ALL_DATA, MODELS, RESULTS, command_line as bench_command_line  # noqa: E402
from bench import shorten  # noqa: E402  (paths in commands, relative to the repository root)

DATA = ALL_DATA / "sick"
SPARSE_MODEL = RESULTS / "tmp/models/sick-sparsecl-hoyer"
ALPHA_TABLE = RESULTS / "contradiction_table.json"
ALPHA_ROW = "cosine + SparseCL (Hoyer), alpha tuned on dev"


def add_common_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", default=str(DATA), help="SICK in BEIR layout (default ../shared/data/sick)")
    parser.add_argument("--qrels", default=None,
                        help="contradiction qrels of the evaluated split (default DATA/qrels/dev.tsv)")
    parser.add_argument("--pairs", nargs="+", default=None,
                        help="labelled SICK pairs files that define which sentence entails which "
                             "(default DATA/pairs_dev.tsv DATA/pairs_train.tsv)")
    parser.add_argument("--model", default=str(MODELS / "use-lite-en"), help="dense encoder E")
    parser.add_argument("--sparse-model", default=str(SPARSE_MODEL), help="sparse-aware encoder Es (SparseCL)")
    parser.add_argument("--alpha", type=float, default=None,
                        help=f"weight of the Hoyer term (default: the SICK row '{ALPHA_ROW}' of "
                             "benchmarks/results/contradiction_table.json)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--no-cache", action="store_true",
                        help="build the index afresh instead of reusing benchmarks/results/tmp/indexes/")


def resolve_args(args: argparse.Namespace) -> argparse.Namespace:
    """Fills the defaults that depend on --data, reads alpha, and stops with a message when an input
    is missing."""
    data = Path(args.data)
    args.qrels = args.qrels or str(data / "qrels/dev.tsv")
    args.pairs = args.pairs or [str(data / "pairs_dev.tsv"), str(data / "pairs_train.tsv")]
    required = [("--data", data / "corpus.jsonl"), ("--data", data / "queries.jsonl"), ("--qrels", Path(args.qrels)),
                ("--model", Path(args.model) / "manifest.json"),
                ("--sparse-model", Path(args.sparse_model) / "manifest.json")]
    required += [("--pairs", Path(p)) for p in args.pairs]
    for flag, path in required:
        if not path.exists():
            hint = (" (the SICK SparseCL model comes from benchmarks/tables/contradiction_table.sh --sets sick)"
                    if flag == "--sparse-model" else "")
            raise SystemExit(f"{flag}: {path} does not exist{hint}")
    if args.alpha is None:
        args.alpha, args.alpha_source, tuned_command = table_alpha()
        if f"--sparse-model {shorten(args.sparse_model)}" not in tuned_command:
            print(f"warning: alpha {args.alpha:g} was tuned with another Es than {shorten(args.sparse_model)} "
                  f"(`{tuned_command}`); pass --alpha to override", file=sys.stderr)
            args.alpha_source += ", tuned for another Es"
    else:
        args.alpha_source = "--alpha"
    return args


def table_alpha():
    if not ALPHA_TABLE.exists():
        raise SystemExit(f"--alpha not given and {shorten(str(ALPHA_TABLE))} does not exist: run "
                         "benchmarks/tables/contradiction_table.sh --sets sick first, or pass --alpha")
    rows = json.loads(ALPHA_TABLE.read_text()).get("rows", [])
    for row in rows:
        if row.get("label") == ALPHA_ROW and row.get("set") == "sick" and "alpha" in row:
            source = f"{shorten(str(ALPHA_TABLE))}, row '{ALPHA_ROW}' (sick)"
            return float(row["alpha"]), source, row.get("command", "")
    raise SystemExit(f"--alpha not given and {shorten(str(ALPHA_TABLE))} has no SICK row '{ALPHA_ROW}' with an "
                     "alpha: run benchmarks/tables/contradiction_table.sh --sets sick first, or pass --alpha")


class Sick:
    """The corpus, the query texts, the contradiction qrels and, per corpus id, the ids it entails and
    the ids it contradicts by the pairs files' labels (per direction: entailment_AB = A entails B,
    entailment_BA = B entails A). Pair sentences are mapped to corpus ids by exact text (SICK corpus
    texts are unique)."""

    def __init__(self, args: argparse.Namespace):
        dataset = cp.load_beir(args.data)
        self.ids = [d.id for d in dataset.corpus]
        self.texts = [d.text for d in dataset.corpus]
        self.text_of = dict(zip(self.ids, self.texts))
        by_text = {t: i for i, t in zip(self.ids, self.texts)}
        self.query_text = {q.id: q.text for q in dataset.queries}
        self.qrels_path = args.qrels
        self.qrels = {q: {d: g for d, g in docs.items() if g > 0} for q, docs in cp.load_qrels(args.qrels).items()}
        self.query_ids = sorted(q for q in self.qrels if q in self.query_text and self.qrels[q])
        if not self.query_ids:
            raise SystemExit(f"--qrels: no query of {args.data} has judgements in {args.qrels}")
        self.entails = collections.defaultdict(set)
        self.contradicts = collections.defaultdict(set)
        for path in args.pairs:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
            if not rows or not {"sentence_A", "sentence_B", "entailment_AB", "entailment_BA"} <= rows[0].keys():
                raise SystemExit(f"--pairs: {path} is not a SICK pairs file (sentence_A, sentence_B, "
                                 "entailment_AB, entailment_BA)")
            for r in rows:
                a, b = by_text.get(r["sentence_A"]), by_text.get(r["sentence_B"])
                if a is None or b is None:
                    raise SystemExit(f"--pairs: {path}, pair {r.get('pair_ID')}: a sentence is not in the corpus")
                if r["entailment_AB"].strip() == "A_entails_B":
                    self.entails[a].add(b)
                if r["entailment_BA"].strip() == "B_entails_A":
                    self.entails[b].add(a)
                if r["entailment_AB"].strip() == "A_contradicts_B":
                    self.contradicts[a].add(b)
                if r["entailment_BA"].strip() == "B_contradicts_A":
                    self.contradicts[b].add(a)

    def entailed(self, query_id: str):
        return sorted(self.entails.get(query_id, ()))


def seeded_order(ids, seed: int, key: str):
    """A deterministic shuffle of ids, seeded by (seed, key): the same on every run and machine."""
    order = sorted(ids)
    random.Random(f"{seed}:{key}").shuffle(order)
    return order


def cache_key(args: argparse.Namespace) -> str:
    h = hashlib.sha256((Path(args.data) / "corpus.jsonl").read_bytes())
    for model in (args.model, args.sparse_model):
        h.update((Path(model) / "manifest.json").read_bytes())
    return h.hexdigest()[:16]


def load_index(args: argparse.Namespace, sick: Sick):
    """E and Es loaded once; the flat index over the whole corpus is cached under
    results/tmp/indexes/ (keyed by the corpus and both manifests; Index.load also checks the
    encoders' identities) so that a rerun encodes nothing but the queries."""
    encoder = cp.Encoder.load(args.model, threads=args.threads)
    sparse = cp.Encoder.load(args.sparse_model, threads=args.threads)
    cache = RESULTS / "tmp/indexes" / f"py-sick-{encoder.name}+{sparse.name}-{cache_key(args)}"
    started = time.time()
    if cache.exists() and not args.no_cache:
        try:
            index = cp.Index.load(cache, encoder=encoder, sparse_encoder=sparse)
            if len(index) == len(sick.ids):
                print(f"index: reused {shorten(str(cache))}", file=sys.stderr)
                return index, encoder, sparse, 0.0
        except (ValueError, RuntimeError) as error:
            print(f"index: cache {cache} not usable ({error}); rebuilding", file=sys.stderr)
    index = cp.Index.build(sick.texts, sick.ids, encoder=encoder, sparse_encoder=sparse, kind="flat",
                           progress=sys.stderr.isatty())
    seconds = round(time.time() - started, 1)
    cache.parent.mkdir(parents=True, exist_ok=True)
    index.save(cache)
    print(f"index: encoded {len(sick.ids)} sentences with E and Es in {seconds} s, saved {shorten(str(cache))}",
          file=sys.stderr)
    return index, encoder, sparse, seconds


def search(index, texts, excludes, scorer: str, alpha: float, k: int = 10):
    """Two-stage search as `counterpoint run` does it (K = 1000 cosine candidates, guard on), with one
    exclude list per query."""
    candidates = max(k, min(CANDIDATES, len(index)))
    return index.search(list(texts), k=k, candidates=candidates, scorer=scorer,
                        alpha=alpha if scorer == "hoyer" else None, exclude=[sorted(e) for e in excludes])


def command_line(script_file: str) -> str:
    """How the benchmark in SCRIPT_FILE was started, as its rows record it."""
    return bench_command_line("PYTHONPATH=python /usr/bin/python3", script_file)


def settings(args: argparse.Namespace) -> dict:
    return {"data": shorten(args.data), "qrels": shorten(args.qrels), "pairs": [shorten(p) for p in args.pairs],
            "model": shorten(args.model), "sparse_model": shorten(args.sparse_model), "alpha": args.alpha,
            "alpha_source": args.alpha_source, "seed": args.seed, "threads": args.threads,
            "candidates": CANDIDATES}


def fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def write_results(name: str, title: str, notes, columns, rows, meta: dict) -> str:
    """results/<name>.json (settings, notes, rows) and <name>.md (notes, then one table whose rows
    each end with the command that produced them); returns the markdown."""
    lines = [f"# {title}", ""]
    for note in notes:
        lines += [note, ""]
    lines.append("| " + " | ".join(label for _, label in columns) + " | command |")
    lines.append("|" + "---|" * (len(columns) + 1))
    for row in rows:
        cells = [fmt(row.get(key)) for key, _ in columns]
        lines.append("| " + " | ".join(cells) + " | `" + row["command"].replace("|", "\\|") + "` |")
    table = "\n".join(lines) + "\n"
    (RESULTS / f"{name}.json").write_text(json.dumps({"benchmark": name, **meta, "notes": notes, "rows": rows},
                                                     indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(table)
    return table
