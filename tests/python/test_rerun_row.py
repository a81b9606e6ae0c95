"""benchmarks/lib/rerun_row.py replays a recorded evaluation row on other qrels with the alpha it chose
on dev fixed: the tuning flag gives way to --alpha, the qrels and run file are the caller's, and a
row not made by `counterpoint run` is refused."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "lib"))
import rerun_row  # noqa: E402

TUNED = {"label": "cos + Hoyer", "set": "sick", "kind": "eval", "alpha": 2.45,
         "command": "build/bin/counterpoint run --dataset D --qrels dev.tsv --model m --sparse-model es "
                    "--scorer hoyer --tune-alpha interval --index-cache C"}


def test_a_tuned_row_is_replayed_with_its_alpha_fixed_on_the_given_qrels():
    argv = rerun_row.replay_command(TUNED, "/q/test.tsv", "/r/run.trec")
    assert "--tune-alpha" not in argv and "dev.tsv" not in argv
    assert argv[argv.index("--alpha") + 1] == "2.45"
    assert argv[-4:] == ["--qrels", "/q/test.tsv", "--out", "/r/run.trec"]
    assert argv[:2] == ["build/bin/counterpoint", "run"] and argv[argv.index("--index-cache") + 1] == "C"


def test_a_cosine_row_gets_no_alpha_and_a_sparsity_row_without_one_is_refused():
    cosine = {"label": "zero-shot", "set": "sick", "kind": "eval",
              "command": "build/bin/counterpoint run --dataset D --qrels dev.tsv --model m"}
    assert "--alpha" not in rerun_row.replay_command(cosine, "q", "o")
    with pytest.raises(SystemExit, match="records no alpha"):
        rerun_row.replay_command({k: v for k, v in TUNED.items() if k != "alpha"}, "q", "o")
    with pytest.raises(SystemExit, match="was not made by `counterpoint run`"):
        rerun_row.replay_command({**cosine, "command": "python3 benchmarks/tables/other.py"}, "q", "o")


def test_a_fixed_alpha_run_records_its_alpha_so_it_can_be_replayed():
    import make_table  # noqa: E402 (benchmarks/lib/ is on the path above)
    log = ("queries 160  hits per query 101  scorer sparsity (hoyer), alpha 1.035 (given)\n"
           "ndcg@10\t0.5036\nrecall@100\t0.9750\n")
    assert make_table.parse_log(log) == {"ndcg@10": 0.5036, "recall@100": 0.975, "queries": 160, "alpha": 1.035}
    assert "alpha" not in make_table.parse_log("queries 160  hits per query 101  scorer cosine\nndcg@10\t0.4990\n")


def test_a_training_log_gives_its_steps_triples_and_loss_in_either_form_the_trainer_wrote():
    import make_table  # noqa: E402
    log = "trained 63 steps on 2015 triples, final loss 4.09069, 1.2 triples/s -> models/x\n"
    assert make_table.parse_log(log) == {"steps": 63, "triples": 2015, "final_loss": 4.09069, "triples_per_second": 1.2}
    older = "trained 310 steps, final loss 3.5, 40.0 triples/s -> models/y\n"
    assert make_table.parse_log(older) == {"steps": 310, "final_loss": 3.5, "triples_per_second": 40.0}


def test_an_absent_model_is_retrained_after_the_absent_model_its_training_starts_from(tmp_path):
    base, head = "benchmarks/results/tmp/absent-test/es-network", "benchmarks/results/tmp/absent-test/es-mlp-head"
    all_rows = [("t", {"label": "train head", "kind": "train",
                       "command": f"/usr/bin/time -v build/bin/counterpoint train sparsecl --base {base} --head-only "
                                  f"--head-kind mlp --out {head}"}),
                ("t", {"label": "train network", "kind": "train",
                       "command": f"/usr/bin/time -v build/bin/counterpoint train sparsecl --base all-minilm-l6-v2 "
                                  f"--out {base}"})]
    ran = []
    rerun_row.ensure_models(["build/bin/counterpoint", "run", "--model", "all-minilm-l6-v2", "--sparse-model", head],
                            all_rows, run=lambda command, **_: ran.append(command[command.index("--out") + 1]))
    assert ran == [base, head]
    with pytest.raises(SystemExit, match="no train row records a command writing it"):
        rerun_row.ensure_models(["run", "--sparse-model", "benchmarks/results/tmp/absent-test/other"], all_rows)
