#!/usr/bin/python3
"""Paper Table 3 analogue (section 4.4, retrieval corpus cleaning) on SICK dev.

Trusted sentences S and injected corruption: the qrels pair each query A with the sentences that
contradict it, and SICK contradictions mostly go both ways (A's contradiction is itself a query), so
S is chosen greedily (queries with entailed sentences first, then by id): A joins S unless it, or a
sentence it entails, is already injected, or one of its contradictions is already trusted; A's
contradictions are then the injected corruption. Two QA tasks, both by cosine of E: 'A -> entailed'
(query = A in S, relevant = the sentences A entails, from the SICK pairs files) and 'entailed -> A'
(query = a sentence A entails, relevant = A: the trusted answer is never removed, as in the paper).

Corpora: original = corpus minus every injected sentence; corrupted = full corpus; cleaned = the
corrupted corpus minus, for each trusted A, its top-N hits (never a trusted sentence) under cosine
alone or under cos + alpha * Hoyer(Es). All four are exclude lists over one index built once.

    PYTHONPATH=python /usr/bin/python3 benchmarks/tables/corpus_cleaning.py \
        [--data ../shared/data/sick] [--qrels ../shared/data/sick/qrels/dev.tsv] \
        [--sparse-model benchmarks/results/tmp/models/sick-sparsecl-hoyer] [--alpha A] [--remove-top 3,1]

Writes benchmarks/results/corpus_cleaning.{json,md} and prints the table."""
import argparse
import sys
import time

import counterpoint as cp

import sick_support as ss


def choose_trusted(sick: "ss.Sick", queries):
    """(trusted queries in order, their answers, the injected sentences, queries left out)."""
    answers = {q: set(sick.entailed(q)) - set(sick.qrels[q]) - {q} for q in queries}
    trusted, injected, protected, skipped = [], set(), set(), []
    for q in sorted(queries, key=lambda q: (not answers[q], q)):
        contradictions = set(sick.qrels[q])
        if q in injected or answers[q] & injected or contradictions & protected:
            skipped.append(q)
            continue
        trusted.append(q)
        injected |= contradictions
        protected |= {q} | answers[q]
    return trusted, {q: answers[q] for q in trusted}, injected, skipped


def qa_tasks(trusted, answers):
    """The two QA tasks: [(name, query ids, qrels)]. 'A -> entailed': query = a trusted sentence,
    relevant = what it entails (cleaning can remove answers). 'entailed -> A': query = a sentence
    that a trusted sentence entails, relevant = the trusted sentences that entail it (the paper's
    case: the trusted answer itself is never removed)."""
    forward = {q: {d: 1 for d in answers[q]} for q in trusted if answers[q]}
    backward = {}
    for q in trusted:
        for d in answers[q]:
            backward.setdefault(d, {})[q] = 1
    return [("A -> entailed", sorted(forward), forward), ("entailed -> A", sorted(backward), backward)]


def check_clean_command(args, sick, trusted, corpora):
    """Runs `counterpoint clean` with the trusted sentences for every top N of the cos + Hoyer rows
    and compares the removed ids; returns one note per N, or exits 1 on the first difference."""
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    notes = []
    with tempfile.TemporaryDirectory(prefix="cp-clean-check-") as tmp:
        trusted_file = Path(tmp) / "trusted.txt"
        trusted_file.write_text("".join(sick.text_of[q] + "\n" for q in trusted), encoding="utf-8")
        for label, scorer, removed in corpora:
            if scorer != "hoyer":
                continue
            top = int(label.rsplit(" ", 1)[1])
            out = Path(tmp) / f"top{top}"
            command = [args.check_cli, "clean", "--trusted", str(trusted_file), "--corpus", args.data,
                       "--out", str(out), "--model", args.model, "--sparse-model", args.sparse_model,
                       "--alpha", repr(args.alpha), "--top", str(top), "--candidates", str(ss.CANDIDATES),
                       "--threads", str(args.threads)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            with open(out / "report.jsonl", encoding="utf-8") as report:
                by_cli = {json.loads(line)["id"] for line in report}
            if by_cli != removed:
                raise SystemExit(f"`counterpoint clean --top {top}` removed {len(by_cli)} sentences, the benchmark "
                                 f"{len(removed)}; only the CLI: {sorted(by_cli - removed)[:10]}, only the "
                                 f"benchmark: {sorted(removed - by_cli)[:10]}")
            notes.append(f"`counterpoint clean --top {top}` (same trusted sentences, encoders and alpha) removes "
                         f"exactly the {len(by_cli)} sentences of the row 'cleaned by cos + Hoyer, top {top}'.")
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ss.add_common_args(parser)
    parser.add_argument("--remove-top", default="3,1",
                        help="cleaning removes the top N hits per trusted sentence; comma-separated Ns (paper: 3)")
    parser.add_argument("--max-queries", type=int, default=0, help="only the first N qrels queries (by id), for testing")
    parser.add_argument("--check-cli", metavar="COUNTERPOINT", default=None,
                        help="also run `COUNTERPOINT clean` on the same trusted sentences for every --remove-top and "
                             "stop with an error unless it removes exactly the sentences the cos + Hoyer rows remove")
    parser.add_argument("--results-name", default="corpus_cleaning",
                        help="writes benchmarks/results/NAME.{json,md} (default corpus_cleaning)")
    args = ss.resolve_args(parser.parse_args())
    try:
        tops = [int(n) for n in args.remove_top.split(",")]
        assert all(n > 0 for n in tops)
    except (ValueError, AssertionError):
        raise SystemExit(f"--remove-top: {args.remove_top!r} is not a comma-separated list of positive counts")

    started = time.time()
    sick = ss.Sick(args)
    queries = sick.query_ids[:args.max_queries] if args.max_queries > 0 else sick.query_ids
    trusted, answers, injected, skipped = choose_trusted(sick, queries)
    tasks = qa_tasks(trusted, answers)
    if not tasks[0][1]:
        raise SystemExit("no trusted query entails a corpus sentence: nothing to evaluate")
    all_answers = set().union(*answers.values())
    index, _, _, encode_seconds = ss.load_index(args, sick)

    corpora = [("original (injected removed)", "-", injected), ("corrupted (full corpus)", "-", set())]
    gate = "no gate"
    for top in tops:
        for short, scorer in (("cosine", "cosine"), ("cos + Hoyer", "hoyer")):
            hits = ss.search(index, [sick.text_of[q] for q in trusted], [trusted] * len(trusted), scorer,
                             args.alpha, k=top)
            if scorer == "hoyer":
                gate = hits.sparsity_scale[2]  # Es's recorded magnitude gate, if any, applies
            corpora.append((f"cleaned by {short}, top {top}", scorer, {h.id for hs in hits for h in hs}))

    cli_checks = check_clean_command(args, sick, trusted, corpora) if args.check_cli else []
    command = ss.command_line(__file__)
    rows = []
    for task, qa, qa_qrels in tasks:
        task_rows = []
        for label, cleaner, removed in corpora:
            hits = ss.search(index, [sick.text_of[q] for q in qa], [removed | {q} for q in qa], "cosine", args.alpha)
            scores = cp.evaluate(cp.hits_to_run(qa, hits), qa_qrels, ["ndcg@10", "recall@10"])
            top10 = [{h.id for h in hs} for hs in hits]
            task_rows.append({
                "task": task, "corpus": label, "cleaner": cleaner, "qa_queries": len(qa),
                "qa_ndcg@10": scores["ndcg@10"], "qa_recall@10": scores["recall@10"],
                "corrupt_share@10": sum(len(t & injected) for t in top10) / (10 * len(qa)),
                "removed": len(removed), "removed_injected": len(removed & injected),
                "removed_genuine": len(removed - injected), "removed_answers": len(removed & all_answers),
                "injected_left": len(injected - removed), "command": command})
        original, corrupted = task_rows[0]["qa_ndcg@10"], task_rows[1]["qa_ndcg@10"]
        for row in task_rows[2:]:
            loss = original - corrupted
            row["recovered"] = (row["qa_ndcg@10"] - corrupted) / loss if loss > 0 else None
        rows += task_rows
    seconds = round(time.time() - started, 1)

    relevant = sum(len(a) for a in answers.values())
    notes = [
        f"Command (all rows, {seconds} s, of which {encode_seconds} s encoding the corpus; 0 = cached index): "
        f"`{command}`",
        f"Of {len(queries)} queries of `{ss.shorten(args.qrels)}`, {len(trusted)} are trusted sentences (the "
        f"other {len(skipped)} are mostly the other side of a mutual contradiction, hence injected); their "
        f"{len(injected)} contradictions are the injected corruption. {len(tasks[0][1])} trusted sentences entail "
        f"{relevant} corpus sentences (per direction, from {', '.join(ss.shorten(p) for p in args.pairs)}).",
        "QA tasks, both retrieved by cosine of E = "
        f"`{ss.shorten(args.model)}` with the query's own id excluded: 'A -> entailed' (query = trusted sentence A, "
        "relevant = the sentences A entails; cleaning can remove them) and 'entailed -> A' (query = a sentence "
        "that A entails, relevant = A; like the paper, the trusted answer itself is never removed).",
        f"Cleaning: per trusted sentence, its top N in the corrupted corpus under cos + {args.alpha:g} * "
        f"Hoyer(Es = `{ss.shorten(args.sparse_model)}`) ({args.alpha_source}; {gate}) or under cosine alone, "
        f"K = {ss.CANDIDATES}, guard on; trusted sentences are never returned. The paper removes the top 3; SICK has "
        f"{len(injected) / len(trusted):.2f} injected contradictions per trusted sentence, so top 3 removes at least "
        "two genuine sentences per trusted one, and top 1 is shown too.",
        "Columns: corrupt@10 = share of the top 10 that is injected; removed inj / genuine = removed sentences "
        "that were / were not injected; answers removed = genuine removed sentences that are QA answers of "
        "'A -> entailed' (queries of 'entailed -> A'); recovered = (cleaned - corrupted) / (original - corrupted) "
        "QA nDCG@10, meaningful only when the corruption loss (original - corrupted) is well above noise.",
    ] + cli_checks
    columns = [("task", "QA task"), ("corpus", "corpus"), ("qa_queries", "n"), ("qa_ndcg@10", "QA nDCG@10"),
               ("qa_recall@10", "QA R@10"), ("corrupt_share@10", "corrupt@10"), ("removed", "removed"),
               ("removed_injected", "removed inj"), ("removed_genuine", "removed genuine"),
               ("removed_answers", "answers removed"), ("injected_left", "injected left"), ("recovered", "recovered")]
    table = ss.write_results(args.results_name, "Corpus cleaning with contradiction retrieval, SICK dev "
                             "(paper Table 3)", notes, columns, rows,
                             {**ss.settings(args), "remove_top": tops, "seconds": seconds,
                              "trusted": len(trusted), "injected": len(injected), "skipped": len(skipped)})
    sys.stdout.write(table)


if __name__ == "__main__":
    main()
