"""counterpoint.Encoder: embeddings of the committed tiny BERT model, the GIL released while it
runs, progress/cancellation (callable, Ctrl-C) and the errors bad input raises."""
import json
import os
import pathlib
import shutil
import signal
import sys
import threading
import time
import _thread

import numpy as np
import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)
USE_LITE = REPO / "models" / "installed" / "use-lite-en"

LONG_TEXTS = [f"sentence number {i} says the cat sat on the mat while the dog barked loudly at {i % 7} birds"
              for i in range(3000)]


def test_load_exposes_manifest_and_widths(encoder):
    assert encoder.dim == 32 and encoder.token_dim == 32
    assert encoder.name == "bert-tiny-random"
    assert encoder.manifest["architecture"] == "bert"
    assert encoder.manifest["pooling"] == "cls"
    assert "bert-tiny-random" in repr(encoder)


def test_encode_matches_the_numpy_reference_embeddings(encoder):
    expected = json.loads((BERT_TINY / "expected.json").read_text())["sentences"]
    texts = [s["text"] for s in expected]
    result = encoder.encode(texts)
    assert result.shape == (len(texts), 32) and result.dtype == np.float32
    np.testing.assert_allclose(result, np.array([s["embedding"] for s in expected]), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(result, axis=1), 1.0, atol=1e-5)


def test_encode_of_an_empty_list_is_a_zero_row_matrix(encoder):
    assert encoder.encode([]).shape[0] == 0


def test_encode_tokens_gives_one_matrix_per_text_without_padding(encoder):
    expected = json.loads((BERT_TINY / "expected.json").read_text())["sentences"]
    states = encoder.encode_tokens([s["text"] for s in expected[:2]])
    assert [s.shape for s in states] == [(len(e["ids"]), 32) for e in expected[:2]]
    np.testing.assert_allclose(np.linalg.norm(states[0], axis=1), 1.0, atol=1e-5)


def test_prefix_changes_the_embedding(encoder):
    plain = encoder.encode(["cats purr"])
    prefixed = encoder.encode(["cats purr"], prefix="the dog says ")
    assert not np.allclose(plain, prefixed)


def test_bad_arguments_raise_clear_errors(encoder):
    with pytest.raises(TypeError, match="single str"):
        encoder.encode_tokens("one text")  # encode takes one str, as sentence-transformers does
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        encoder.encode(["a", 2])
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        encoder.encode(["a"], batch_size=0)


def test_missing_model_directory_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        cp.Encoder.load(str(tmp_path / "absent"))
    (tmp_path / "corpus").mkdir()  # a folder that exists but holds no model: the folder is what is wrong
    with pytest.raises(FileNotFoundError, match=r"corpus is a folder but not a model: a model folder holds "
                                                r"manifest.json beside its weights"):
        cp.Encoder.load(str(tmp_path / "corpus"))
    hub = tmp_path / "all-MiniLM-L6-v2"  # a sentence-transformers folder, as the hub gives it
    hub.mkdir()
    (hub / "config.json").write_text('{"model_type": "bert"}')
    (hub / "modules.json").write_text("[]")
    with pytest.raises(FileNotFoundError, match=r"all-MiniLM-L6-v2 is a Hugging Face checkpoint \(config.json\), not "
                                                r"a counterpoint model: `counterpoint models convert .*all-MiniLM-L6-v2` \(Python: "
                                                r"`cp.models.convert\(...\)`\) converts a BERT or MPNet one into the "
                                                r"per-user cache, then load it by its name \('all-minilm-l6-v2'\)"):
        cp.Encoder.load(str(hub))


def test_a_tampered_model_file_raises_corrupt_file_error(tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(BERT_TINY, copy)
    with open(copy / "vocab.txt", "a") as vocab:
        vocab.write("tampered\n")
    with pytest.raises(cp.CorruptFileError) as caught:
        cp.Encoder.load(str(copy))
    assert isinstance(caught.value, ValueError)
    assert "vocab.txt" in str(caught.value)


def test_encode_releases_the_gil(encoder):
    ticks = []
    stop = threading.Event()

    def heartbeat():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=heartbeat)
    thread.start()
    time.sleep(0.01)
    start = time.perf_counter()
    encoder.encode(LONG_TEXTS, batch_size=len(LONG_TEXTS))  # one network call, no callbacks in between
    end = time.perf_counter()
    stop.set()
    thread.join()
    during = [t for t in ticks if start < t < end]
    assert end - start > 0.05, "the encode was too short to tell"
    # A thread blocked on the GIL would not tick at all during the single network call.
    assert len(during) >= 0.2 * (end - start) / 0.0011


def test_a_progress_callable_sees_every_batch(encoder):
    seen = []
    encoder.encode(LONG_TEXTS[:100], batch_size=32, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(32, 100), (64, 100), (96, 100), (100, 100)]


def test_progress_true_draws_a_tqdm_bar(encoder, capsys):
    encoder.encode(LONG_TEXTS[:64], batch_size=32, progress=True)
    assert "64/64" in capsys.readouterr().err


def test_progress_true_in_a_log_writes_lines_not_carriage_return_frames(tmp_path):
    """A script whose stderr is a file gets "encode: done/total" lines (the first, then every few
    seconds, and the last), as the CLI writes them, never a line of thousands of \\r frames."""
    import subprocess
    log = tmp_path / "progress.log"
    script = (f"import counterpoint as cp; enc = cp.Encoder.load({str(BERT_TINY)!r}, threads=1); "
              f"enc.encode(['a text'] * 96, batch_size=16, progress=True)")
    with open(log, "w") as stderr:
        subprocess.run([sys.executable, "-c", script], stderr=stderr, check=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    lines = log.read_text().splitlines()
    assert "\r" not in log.read_text()
    assert lines[0].endswith(": 16/96") and lines[-1].endswith(": 96/96"), lines
    assert len(lines) <= 3, lines  # the first, maybe one 5 seconds on, the last


def test_a_progress_callable_returning_false_cancels_with_keyboard_interrupt(encoder):
    calls = []

    def stop_after_two(done, total):
        calls.append(done)
        return len(calls) < 2

    with pytest.raises(KeyboardInterrupt):
        encoder.encode(LONG_TEXTS, batch_size=16, progress=stop_after_two)
    assert calls == [16, 32]


def test_an_exception_raised_by_the_progress_callable_propagates(encoder):
    class Stop(Exception):
        pass

    def fail(done, total):
        raise Stop("from the callback")

    with pytest.raises(Stop, match="from the callback"):
        encoder.encode(LONG_TEXTS[:64], batch_size=16, progress=fail)


@pytest.fixture
def python_handles_ctrl_c():
    # A process started in the background by a shell without job control inherits SIGINT as
    # ignored, and then interrupt_main() does nothing; these tests are about what Ctrl-C does when
    # Python handles it, as in a terminal or a notebook.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("python_handles_ctrl_c")
def test_ctrl_c_stops_a_long_encode(encoder):
    seen = []
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            encoder.encode(LONG_TEXTS * 20, batch_size=8, progress=lambda done, total: seen.append(done))
    finally:
        timer.cancel()
    assert 0 < seen[-1] < len(LONG_TEXTS) * 20


@pytest.mark.usefixtures("python_handles_ctrl_c")
def test_ctrl_c_stops_an_encode_without_progress(encoder):
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            encoder.encode(LONG_TEXTS * 20, batch_size=8)
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 30


@pytest.mark.skipif(not (USE_LITE / "manifest.json").exists(),
                    reason="the default model models/installed/use-lite-en is not installed")
def test_the_default_use_lite_model_ranks_a_paraphrase_above_an_unrelated_text():
    use = cp.Encoder.load(str(USE_LITE), threads=1)
    rows = use.encode(["How old are you?", "What is your age?", "The stock market fell sharply today."])
    assert rows.shape == (3, use.dim)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    similarity = cp.cosine(rows[0], rows[1:])
    assert similarity[0] > similarity[1]


def test_load_finds_an_installed_model_by_name_through_counterpoint_models(tmp_path, monkeypatch):
    models = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", REPO / "models" / "installed"))
    if not (models / "all-minilm-l6-v2" / "manifest.json").exists():
        pytest.skip(f"all-minilm-l6-v2 is not installed under {models}")
    monkeypatch.chdir(tmp_path)  # no ./models/installed here: the variable must be used
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(models))
    assert cp.Encoder.load("all-minilm-l6-v2", threads=1).name == "all-minilm-l6-v2"
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=f"not found as a directory nor in the models folders {tmp_path} "
                                                r"\(\$COUNTERPOINT_MODELS: empty\)"):
        cp.Encoder.load("no-such-model", threads=1)


def test_an_unknown_model_name_lists_the_installed_ones_and_suggests_the_nearest(tmp_path, monkeypatch):
    for name in ("all-minilm-l6-v2", "all-mpnet-base-v2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(tmp_path))
    with pytest.raises(FileNotFoundError) as raised:
        cp.Encoder.load("all-MiniLM-L6", threads=1)
    assert str(raised.value).startswith(f"model 'all-MiniLM-L6' not found as a directory nor in the models folders "
                                        f"{tmp_path} ($COUNTERPOINT_MODELS: all-minilm-l6-v2 all-mpnet-base-v2), ")
    assert "; did you mean 'all-minilm-l6-v2'?" in str(raised.value)


def test_similarity_is_the_cosine_matrix_as_sentence_transformers_gives_it(encoder):
    a = encoder.encode(["cats purr", "dogs bark"])
    b = encoder.encode(["cats purr", "the market fell", "dogs bark"])
    matrix = encoder.similarity(a, b)
    assert matrix.shape == (2, 3) and matrix.dtype == np.float32
    np.testing.assert_allclose(matrix, a @ b.T, atol=1e-5)
    np.testing.assert_allclose(np.diag(matrix[:, [0, 2]]), [1.0, 1.0], atol=1e-5)
    assert encoder.similarity(a[0], b).shape == (1, 3)  # one embedding is one row, as in model.similarity
    np.testing.assert_allclose(encoder.similarity("cats purr", ["cats purr", "dogs bark"]), matrix[:1, [0, 2]],
                               atol=1e-5)
    with pytest.raises(ValueError):
        encoder.similarity(a, b[:, :5])
    assert encoder.similarity([], ["dogs bark"]).shape == (0, 1)  # no texts: no rows, as in model.similarity


def test_encode_follows_sentence_transformers_conventions(encoder):
    rows = encoder.encode(["cats purr", "dogs bark"])
    one = encoder.encode("cats purr")
    assert one.shape == (encoder.dim,)
    np.testing.assert_allclose(one, rows[0], atol=1e-6)  # alone vs padded in a batch of two
    seen = []
    encoder.encode(["a", "b", "c"], batch_size=2, show_progress_bar=lambda done, total: seen.append(done))
    assert seen == [2, 3]
    raw = encoder.encode(["cats purr", "dogs bark"], normalize_embeddings=False)
    norms = np.linalg.norm(raw, axis=1)
    assert not np.allclose(norms, 1.0)
    np.testing.assert_allclose(raw / norms[:, None], rows, atol=1e-6)
    torch = pytest.importorskip("torch")
    tensors = encoder.encode(["cats purr", "dogs bark"], convert_to_numpy=False)
    assert isinstance(tensors, list) and all(isinstance(t, torch.Tensor) for t in tensors)
    np.testing.assert_array_equal(tensors[1].numpy(), rows[1])


def test_sentence_transformers_query_and_document_habits(encoder):
    """encode_query / encode_document (sentence-transformers v5), convert_to_tensor, device and
    get_sentence_embedding_dimension do what they do there; a device the library cannot encode on
    is refused by name rather than served by the CPU without a word."""
    texts = ["cats purr", "dogs bark"]
    np.testing.assert_array_equal(encoder.encode_query(texts), encoder.encode(texts, query=True))
    np.testing.assert_array_equal(encoder.encode_document(texts), encoder.encode(texts, query=False))
    instructed = encoder.encode_query(texts, prefix="Find a counter-argument: ")
    assert not np.allclose(instructed, encoder.encode_query(texts))
    assert encoder.get_sentence_embedding_dimension() == encoder.dim
    np.testing.assert_array_equal(encoder.encode(texts, device="cpu"), encoder.encode(texts))
    with pytest.raises(ValueError, match=r"^device 'cuda' is not one counterpoint encodes on: it runs on the CPU "
                                         r"\(device='cpu' or None\)$"):
        encoder.encode(texts, device="cuda")
    torch = pytest.importorskip("torch")
    tensor = encoder.encode(texts, convert_to_tensor=True)
    assert isinstance(tensor, torch.Tensor) and tuple(tensor.shape) == (2, encoder.dim)
    np.testing.assert_array_equal(tensor.numpy(), encoder.encode(texts))
    assert tuple(encoder.encode("cats purr", convert_to_tensor=True).shape) == (encoder.dim,)
    np.testing.assert_array_equal(encoder.encode(texts, device=torch.device("cpu")), encoder.encode(texts))
