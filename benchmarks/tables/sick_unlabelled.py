#!/usr/bin/python3
"""How far SICK's contradiction labels cap a run's nDCG@10. SICK labels a relation only between the
two sentences of an annotated pair, so a corpus sentence that plainly contradicts a query ("A man is
playing a flute" / "There is no man playing a flute") but was never paired with it counts as a miss
when it is ranked first. For each run (a TREC file, e.g. from `counterpoint run --out`) this prints:

- nDCG@10 and acc@1 with the split's qrels, as `counterpoint run` reports them;
- the same with every contradiction the labelled pairs files know added to each query's relevant set
  (by default pairs_dev.tsv and pairs_train.tsv: held-back test pairs cannot be added);
- the queries whose first hit is labelled neither way yet carries a negation marker (no, not, nobody,
  none, nothing, never, n't) that the query lacks, listed so a reader can judge them.

    PYTHONPATH=python /usr/bin/python3 benchmarks/tables/sick_unlabelled.py RUN [RUN ...] \\
        [--data ../shared/data/sick] [--qrels ../shared/data/sick/qrels/dev.tsv] [--pairs P ...]

Writes benchmarks/results/sick_unlabelled.{json,md} (or NAME.* with --results-name)."""
import argparse
import re
import sys
from pathlib import Path

import counterpoint as cp

import sick_support as ss

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from bench import BenchmarkError, read_trec, shorten  # noqa: E402

METRICS = ["ndcg@10", "acc@1"]
NEGATION = re.compile(r"\b(no|not|nobody|none|nothing|never)\b|n't", re.IGNORECASE)


def negates(hit: str, query: str) -> bool:
    return bool(NEGATION.search(hit)) and not NEGATION.search(query)


def audit(run_path: str, sick: "ss.Sick", command: str) -> dict:
    try:
        run = read_trec(run_path)
    except (OSError, BenchmarkError) as error:
        raise SystemExit(f"RUN: {error}")
    missing = [q for q in sick.query_ids if q not in run]
    if missing:
        raise SystemExit(f"RUN: {run_path} has no hits for {len(missing)} of the {len(sick.query_ids)} judged "
                         f"queries (first: {missing[0]}); was it run with {shorten(sick.qrels_path)}?")
    run = {q: run[q] for q in sick.query_ids}
    labelled = {q: {**{d: 1 for d in sick.contradicts.get(q, ())}, **sick.qrels[q]} for q in sick.query_ids}
    given = cp.evaluate(run, sick.qrels, METRICS)
    known = cp.evaluate(run, labelled, METRICS)
    unlabelled_first, negated_first = 0, []
    for q in sick.query_ids:
        first = max(run[q].items(), key=lambda hit: (hit[1], hit[0]))[0]
        if first in labelled[q] or first in sick.entails.get(q, ()) or q in sick.entails.get(first, ()):
            continue
        unlabelled_first += 1
        if negates(sick.text_of[first], sick.query_text[q]):
            negated_first.append({"query": q, "query_text": sick.query_text[q], "hit": first,
                                  "hit_text": sick.text_of[first]})
    return {"run": shorten(run_path), "queries": len(sick.query_ids),
            "ndcg@10": given["ndcg@10"], "acc@1": given["acc@1"],
            "ndcg@10 known labels": known["ndcg@10"], "acc@1 known labels": known["acc@1"],
            "first hit unlabelled": unlabelled_first, "of which the query negated": len(negated_first),
            "negated first hits": negated_first, "command": command}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files over the SICK corpus")
    parser.add_argument("--data", default=str(ss.DATA), help="SICK in BEIR layout (default ../shared/data/sick)")
    parser.add_argument("--qrels", default=None, help="contradiction qrels of the run's split (default DATA/qrels/dev.tsv)")
    parser.add_argument("--pairs", nargs="+", default=None,
                        help="labelled pairs files whose contradictions are added (default DATA/pairs_dev.tsv "
                             "DATA/pairs_train.tsv)")
    parser.add_argument("--results-name", default="sick_unlabelled", help="writes benchmarks/results/NAME.{json,md}")
    args = parser.parse_args()
    data = Path(args.data)
    args.qrels = args.qrels or str(data / "qrels/dev.tsv")
    args.pairs = args.pairs or [str(data / "pairs_dev.tsv"), str(data / "pairs_train.tsv")]
    for flag, path in [("--data", data / "corpus.jsonl"), ("--qrels", Path(args.qrels))] + \
            [("--pairs", Path(p)) for p in args.pairs] + [("RUN", Path(r)) for r in args.runs]:
        if not path.exists():
            raise SystemExit(f"{flag}: {path} does not exist")
    outputs = {(ss.RESULTS / f"{args.results_name}{suffix}").resolve() for suffix in (".json", ".md")}
    inputs = [Path(p) for p in args.runs + [args.qrels] + args.pairs]
    for path in inputs:
        if path.resolve() in outputs:
            raise SystemExit(f"--results-name: {args.results_name} would overwrite the input {path}")
    sick = ss.Sick(args)
    command = ss.command_line(__file__)
    rows = [audit(r, sick, command) for r in args.runs]
    columns = [("run", "run"), ("queries", "queries"), ("ndcg@10", "nDCG@10 (qrels)"),
               ("ndcg@10 known labels", "nDCG@10 (qrels + pairs' contradictions)"), ("acc@1", "acc@1 (qrels)"),
               ("acc@1 known labels", "acc@1 (qrels + pairs')"), ("first hit unlabelled", "first hit unlabelled"),
               ("of which the query negated", "of which the query negated")]
    notes = [f"Qrels {shorten(args.qrels)}; contradictions added from {', '.join(shorten(p) for p in args.pairs)}. "
             "'First hit unlabelled': the top hit is neither relevant nor labelled entailed/contradicted with the "
             "query in the pairs files; 'the query negated': that hit carries a negation marker the query lacks."]
    for row in rows:
        notes.append(f"{row['run']}, unlabelled first hits that negate the query:\n\n" + "\n".join(
            f"- {hit['query']} \"{hit['query_text']}\" -> {hit['hit']} \"{hit['hit_text']}\""
            for hit in row["negated first hits"]))
    meta = {"settings": {"data": shorten(args.data), "qrels": shorten(args.qrels),
                         "pairs": [shorten(p) for p in args.pairs]}}
    print(ss.write_results(args.results_name, "SICK: what the contradiction labels leave out", notes, columns,
                           rows, meta))


if __name__ == "__main__":
    main()
